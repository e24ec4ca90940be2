"""The standard library in policies/: documented, lint-clean, fully covered by its tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from policy_engine.cli.main import cli

POLICIES = Path(__file__).resolve().parents[2] / "policies"

LIBRARY = sorted(p for p in POLICIES.glob("*.policy") if not p.name.endswith("_test.policy"))


def test_the_library_has_its_packs() -> None:
    assert {p.stem for p in LIBRARY} >= {
        "pii",
        "secrets",
        "tool-guard",
        "argument-guard",
        "resource-guard",
        "sampling-guard",
        "elicitation-guard",
        "prompt-injection",
        "audit-logger",
        "tool-filter",
    }


@pytest.mark.parametrize("path", LIBRARY, ids=lambda p: p.name)
def test_each_file_opens_with_what_it_protects_against_and_what_not(path: Path) -> None:
    header = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        header.append(line)
    text = "\n".join(header)
    assert header and header[0].startswith("# Protects against:"), path.name
    assert "# Does not protect against:" in text, path.name


def test_check_strict_is_clean(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["check", "--strict", str(POLICIES)])
    assert result.exit_code == 0, result.output
    assert "0 error(s), 0 warning(s)" in result.output


def test_every_rule_fires_in_some_test(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["test", "--coverage", "--threshold", "100", str(POLICIES)])
    assert result.exit_code == 0, result.output
    assert "total: 100.0%" in result.output

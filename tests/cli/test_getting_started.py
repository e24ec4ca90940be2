"""docs/getting-started.md's first policy is what it says: strict-clean, formatted, tested."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from policy_engine.cli.main import cli

DOC = Path(__file__).resolve().parents[2] / "docs" / "getting-started.md"
POLICY = re.search(r"^```policy\n(.*?)^```$", DOC.read_text(encoding="utf-8"), re.M | re.S)


def test_the_first_policy_checks_formats_and_passes_its_tests(tmp_path: Path) -> None:
    assert POLICY is not None
    policy = tmp_path / "my.policy"
    policy.write_text(POLICY.group(1), encoding="utf-8")
    for command in (["check", "--strict"], ["fmt", "--check"], ["test", "--coverage"]):
        result = CliRunner().invoke(cli, [*command, str(policy)])
        assert result.exit_code == 0, (command, result.output)
    assert "2 passed, 0 failed" in CliRunner().invoke(cli, ["test", str(policy)]).output

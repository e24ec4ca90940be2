"""Golden rendered diagnostics: what a person sees for the mistakes people make.

``golden/NAME.policy`` renders to ``golden/NAME.policy.err``: every diagnostic
through ``render_text`` (header, quoted line, carets, help), each followed by a
blank line, exactly as ``policyc check`` prints them. ``multi_error.policy``
is also checked through the CLI in every ``--format``: text against its
``.err``, the others against ``multi_error.policy.{json,github,sarif}``.

Regenerate after an intended change, then review the diff::

    POLICYC_UPDATE_CASES=1 pytest tests/language/test_golden_diagnostics.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from policy_engine.language.codes import CODES
from policy_engine.language.diagnostics import render_text
from policy_engine.language.pipeline import check_sources

GOLDEN = Path(__file__).parent / "golden"
INPUTS = sorted(GOLDEN.glob("*.policy"))
UPDATE = os.environ.get("POLICYC_UPDATE_CASES") == "1"
MULTI = "multi_error.policy"
FORMATS = ("json", "github", "sarif")


def rendered(path: Path) -> str:
    result = check_sources({path.name: path.read_text(encoding="utf-8")})
    return "".join(render_text(d, result.sources) + "\n\n" for d in result.diagnostics)


def compare(actual: str, expected_path: Path) -> None:
    if UPDATE:
        expected_path.write_text(actual, encoding="utf-8")
    assert expected_path.exists(), f"run POLICYC_UPDATE_CASES=1 to create {expected_path.name}"
    assert actual == expected_path.read_text(encoding="utf-8")


@pytest.mark.parametrize("path", INPUTS, ids=[p.stem for p in INPUTS])
def test_rendered_text_matches_golden(path: Path) -> None:
    compare(rendered(path), path.with_name(path.name + ".err"))


def test_goldens_cover_the_common_mistakes() -> None:
    codes = {
        path.stem: {d.code for d in check_sources({path.name: path.read_text()}).diagnostics}
        for path in INPUTS
    }
    assert len(INPUTS) >= 7
    assert "E107" in codes["event_typo"]
    assert "E203" in codes["params_envelope"]
    assert "E201" in codes["lookahead_regex"]
    assert "E004" in codes["single_equals"]
    assert "E003" in codes["unclosed_block"]
    assert "E002" in codes["single_quoted_string"]
    assert "E103" in codes["unknown_pattern"]
    assert len(codes["multi_error"]) >= 4


def test_every_golden_shows_source_and_caret() -> None:
    """Each diagnostic quotes its line and underlines a non-empty run inside it."""
    for path in INPUTS:
        result = check_sources({path.name: path.read_text(encoding="utf-8")})
        assert result.diagnostics, path.name
        lines = path.read_text(encoding="utf-8").split("\n")
        for d in result.diagnostics:
            out = render_text(d, result.sources).split("\n")
            assert out[0].startswith(f"{path.name}:{d.span.line}:{d.span.column}: ")
            gutter = f"{d.span.line} | "
            assert out[2] == gutter + lines[d.span.line - 1], (path.name, out)
            caret = out[3][len(gutter) :]
            assert caret.strip() and set(caret.strip()) == {"^"}
            assert len(caret) - len(caret.lstrip()) == d.span.column - 1
            assert len(caret) <= len(lines[d.span.line - 1]) + 1


# ----------------------------------------------------------------- the CLI


@cache
def cli_output(output_format: str) -> tuple[int, str, str]:
    process = subprocess.run(
        [sys.executable, "-m", "policy_engine.cli.main", "check", "--format", output_format, MULTI],
        cwd=GOLDEN,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return process.returncode, process.stdout, process.stderr


@pytest.mark.parametrize("output_format", FORMATS)
def test_cli_output_matches_golden(output_format: str) -> None:
    code, stdout, _ = cli_output(output_format)
    assert code == 1
    compare(stdout, GOLDEN / f"{MULTI}.{output_format}")


def test_cli_text_output_is_the_rendered_golden() -> None:
    code, stdout, stderr = cli_output("text")
    assert code == 1
    assert stdout == (GOLDEN / f"{MULTI}.err").read_text(encoding="utf-8")
    assert stderr == "1 file(s) checked: 4 error(s), 1 warning(s)\n"


def test_cli_json_agrees_with_the_checker() -> None:
    _, stdout, _ = cli_output("json")
    data = json.loads(stdout)
    result = check_sources({MULTI: (GOLDEN / MULTI).read_text(encoding="utf-8")})
    assert data == {"diagnostics": [d.to_json() for d in result.diagnostics]}


def test_cli_github_annotations() -> None:
    _, stdout, _ = cli_output("github")
    lines = stdout.splitlines()
    result = check_sources({MULTI: (GOLDEN / MULTI).read_text(encoding="utf-8")})
    assert len(lines) == len(result.diagnostics)
    for line, d in zip(lines, result.diagnostics, strict=True):
        level = "error" if d.is_error else "warning"
        assert line.startswith(
            f"::{level} file={MULTI},line={d.span.line},col={d.span.column},"
            f"endLine={d.span.end_line},endColumn={d.span.end_column},title={d.code}::"
        )


def test_cli_sarif_has_the_basic_shape() -> None:
    _, stdout, _ = cli_output("sarif")
    log: dict[str, Any] = json.loads(stdout)
    assert log["version"] == "2.1.0"
    assert log["$schema"].endswith("sarif-2.1.0.json")
    assert len(log["runs"]) == 1
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "policyc"
    rule_ids = [rule["id"] for rule in driver["rules"]]
    assert rule_ids == sorted(set(rule_ids))
    for rule in driver["rules"]:
        assert rule["shortDescription"]["text"] == CODES[rule["id"]]
    results = run["results"]
    assert len(results) == 5
    source_lines = (GOLDEN / MULTI).read_text(encoding="utf-8").split("\n")
    for result in results:
        assert result["ruleId"] in rule_ids
        assert result["level"] == ("error" if result["ruleId"].startswith("E") else "warning")
        assert result["message"]["text"]
        (location,) = result["locations"]
        physical = location["physicalLocation"]
        assert physical["artifactLocation"]["uri"] == MULTI
        region = physical["region"]
        assert 1 <= region["startLine"] <= region["endLine"] <= len(source_lines)
        assert region["startColumn"] >= 1
        if region["startLine"] == region["endLine"]:
            assert region["startColumn"] < region["endColumn"]
    assert {r["ruleId"] for r in results} == set(rule_ids)

"""`policyc replay` and `policyc diff` find the known differences between the
sets in ``sets/`` and nothing else; ``expectations.json`` says what each must find."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from policy_engine.cli.main import cli

HERE = Path(__file__).resolve().parent
SETS = HERE / "sets"
TRAFFIC = HERE / "traffic.jsonl"
EXPECT = json.loads((HERE / "expectations.json").read_text())


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def run_json(*args: str) -> tuple[int, dict[str, Any]]:
    code, output = run(*args, "--format", "json")
    return code, json.loads(output)


def groups(report: dict[str, Any]) -> list[list[str]]:
    return [[g["kind"], g["interceptor"], g["rule"]] for g in report["groups"]]


@pytest.mark.parametrize("candidate", sorted(EXPECT["replay"]))
def test_replay_against_a_baseline_finds_exactly_the_known_changes(candidate: str) -> None:
    want = EXPECT["replay"][candidate]
    code, report = run_json(
        "replay", str(SETS / candidate), "--baseline", str(SETS / "base"), "--traffic", str(TRAFFIC)
    )
    assert report["messages"] == want["messages"]  # the duplicate line is run once
    assert groups(report) == want["groups"]
    assert code == (1 if want["groups"] else 0)


def test_replay_without_a_baseline_compares_recorded_decisions() -> None:
    code, report = run_json("replay", str(SETS / "candidate"), "--traffic", str(TRAFFIC))
    assert code == 1
    assert groups(report) == EXPECT["replay_recorded"]["candidate"]["groups"]
    assert any("recorded decisions only" in note for note in report["notes"])


def test_replay_masks_values_unless_asked() -> None:
    args = ["replay", str(SETS / "candidate"), "--baseline", str(SETS / "base")]
    args += ["--traffic", str(TRAFFIC)]
    _, masked = run(*args)
    assert "carol@example.com" not in masked
    assert "[EMAIL]" in masked and "[REDACTED]" in masked  # policy literals are no secret
    _, shown = run(*args, "--show-values")
    assert "carol@example.com" in shown


def test_replay_markdown_is_a_pull_request_comment() -> None:
    code, text = run(
        "replay",
        str(SETS / "candidate"),
        "--baseline",
        str(SETS / "base"),
        "--traffic",
        str(TRAFFIC),
        "--format",
        "markdown",
    )
    assert code == 1
    assert text.startswith("### policyc replay")
    assert "| blocked before, allowed now | `tool-guard` | `blocked-tool` | 1 |" in text


def test_replay_github_annotations_warn_on_newly_allowed() -> None:
    _, text = run(
        "replay",
        str(SETS / "candidate"),
        "--baseline",
        str(SETS / "base"),
        "--traffic",
        str(TRAFFIC),
        "--format",
        "github",
    )
    assert "::warning title=blocked before, allowed now::tool-guard / blocked-tool" in text


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("not json", "not JSON"),
        ('{"event":"tools/call","phase":"request","payload":NaN}', "not JSON"),
        ('{"event":"tools/call","phase":"sideways","payload":{}}', "`phase`"),
        ('{"event":"tools/call","phase":"request"}', "`payload` is missing"),
        ('["a list"]', "a record is a JSON object"),
    ],
)
def test_a_bad_traffic_line_is_a_usage_error_naming_the_line(
    tmp_path: Path, line: str, problem: str
) -> None:
    traffic = tmp_path / "t.jsonl"
    traffic.write_text(TRAFFIC.read_text().splitlines()[0] + "\n" + line + "\n")
    code, output = run("replay", str(SETS / "base"), "--traffic", str(traffic))
    assert code == 2
    assert "t.jsonl:2: " in output and problem in output
    assert "Traceback" not in output


@pytest.mark.parametrize("candidate", ["candidate", "reordered"])
def test_diff_finds_the_known_changes_with_shrunk_examples(candidate: str) -> None:
    want = EXPECT["diff"][candidate]
    code, report = run_json("diff", str(SETS / "base"), str(SETS / candidate), "--time-limit", "60")
    found = [g for g in groups(report) if g[0] != "messages"]
    assert found == want["groups"]
    assert [item["change"] for item in report["structural"]] == want["structural"]
    for group in report["groups"]:
        expected = want.get("examples", {}).get(group["rule"])
        if expected is not None and group["kind"] != "messages":
            assert group["examples"][0]["payload"] == expected
    assert code == (1 if want["groups"] or want["structural"] else 0)


def test_diff_notes_the_risks_of_weakened_enforcement() -> None:
    _, report = run_json("diff", str(SETS / "base"), str(SETS / "weakened"))
    risky = [[i["change"], i["what"]] for i in report["structural"] if i.get("risk")]
    assert sorted(risky) == sorted(EXPECT["diff"]["weakened"]["structural_risks"])
    # the audit mutator no longer rewrites: found in behaviour, blamed on it
    assert ["mutation", "pii", "email"] in groups(report)


def test_diff_is_reproducible_for_a_seed() -> None:
    args = ("diff", str(SETS / "base"), str(SETS / "candidate"), "--budget", "200")
    assert run_json(*args)[1] == run_json(*args)[1]


def test_diff_of_a_set_with_itself_is_silent() -> None:
    code, text = run("diff", str(SETS / "base"), str(SETS / "base"))
    assert code == 0
    assert "no change in behaviour" in text


def test_a_set_that_does_not_compile_is_an_error_not_a_change(tmp_path: Path) -> None:
    broken = tmp_path / "broken.policy"
    broken.write_text("validator v {\n  on tools/call request\n  deny if $.name == \n}\n")
    code, output = run("diff", str(SETS / "base"), str(broken))
    assert code == 2
    assert "broken.policy:4:1: error[E001]" in output and "Traceback" not in output
    code, _ = run("replay", str(broken), "--traffic", str(TRAFFIC))
    assert code == 2

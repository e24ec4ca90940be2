"""`policyc analyze`: the exact findings alone, and sampled ones labelled as such."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from policy_engine.cli.main import cli

CASES = Path(__file__).resolve().parents[1] / "language" / "cases" / "lints"


def test_analyze_reports_only_analysis_codes() -> None:
    result = CliRunner().invoke(
        cli, ["analyze", str(CASES / "contradictions.policy"), "--format", "json"]
    )
    assert result.exit_code == 1
    codes = [d["code"] for d in json.loads(result.output)["diagnostics"]]
    assert set(codes) == {"W301", "W304"}
    assert codes.count("W301") == 8


def test_analyze_is_clean_on_the_shipped_library() -> None:
    root = Path(__file__).resolve().parents[2] / "policies"
    result = CliRunner().invoke(cli, ["analyze", str(root)])
    assert result.exit_code == 0, result.output


def test_sampling_lists_rules_never_fired_as_evidence_not_proof(tmp_path: Path) -> None:
    policy = tmp_path / "p.policy"
    policy.write_text(
        "validator v {\n"
        "  on tools/call request\n"
        '  deny if $.name == "shell_exec" "blocked" code reachable\n'
        # Two paths equal to each other: the generator places literals, never pairs.
        '  deny if $.arguments.a == $.arguments.b and $.arguments.a == "zz" "odd" code unreached\n'
        "}\n"
    )
    result = CliRunner().invoke(cli, ["analyze", str(policy), "--sample", "30", "--format", "json"])
    sampled = json.loads(result.output)["sampled"]
    assert [s["rule"] for s in sampled] == ["unreached"]
    assert sampled[0]["samples"] >= 30
    text = CliRunner().invoke(cli, ["analyze", str(policy), "--sample", "30"]).output
    assert "evidence, not proof" in text
    assert result.exit_code == 0  # nothing exact was found

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


PARAM_DEAD = """\
validator caps {
  on tools/call request
  param cap: int = 10
  param enabled: bool = false
  param blocked: list[string] = []
  param internal: string = "*.internal"
  deny if $.arguments.n > param.cap and $.arguments.n < 5 "too many"
  deny if param.enabled == true and $.name == "x" "off"
  deny if $.name in param.blocked "blocked"
  deny if $.arguments.host like param.internal and $.arguments.host == "example.com" "internal"
  deny if $.arguments.n > param.cap "can fire"
}
"""


def test_analyze_finds_rules_their_param_defaults_keep_from_firing(tmp_path: Path) -> None:
    policy = tmp_path / "caps.policy"
    policy.write_text(PARAM_DEAD, encoding="utf-8")
    result = CliRunner().invoke(cli, ["analyze", str(policy)])
    assert result.exit_code == 1
    out = result.output
    for line, param, value in (
        (7, "cap", "10"),
        (8, "enabled", "false"),
        (10, "internal", '"*.internal"'),
    ):
        assert (
            f"{policy}:{line}:3: warning[W315]: this rule cannot fire while "
            f"`param.{param}` = {value} (the default)"
        ) in out
    # Line 11 fires with the default; an empty list default (line 9) means "none configured".
    assert out.count("W315") == 3
    assert "help: with that value its condition is a contradiction: `false == true` is false" in out
    assert "change the default of `cap`" in out


def test_analyze_takes_the_analysis_budget_and_reports_where_it_stopped() -> None:
    case = str(CASES / "shadowed_deny_list.policy")
    full = CliRunner().invoke(cli, ["analyze", case, "--format", "json"])
    codes = [d["code"] for d in json.loads(full.output)["diagnostics"]]
    assert "W320" in codes and "W323" not in codes
    stopped = CliRunner().invoke(
        cli, ["analyze", case, "--format", "json", "--max-analysis-steps", "1"]
    )
    assert stopped.exit_code == 1
    found = json.loads(stopped.output)["diagnostics"]
    budget = [d for d in found if d["code"] == "W323"]
    assert budget and "raise `--max-analysis-steps`" in budget[0]["help"]
    assert budget[0]["line"] > 0
    refused = CliRunner().invoke(cli, ["analyze", case, "--max-analysis-steps", "0"])
    assert refused.exit_code == 2

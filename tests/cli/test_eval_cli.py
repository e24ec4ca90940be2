"""`policyc eval`: the chain's result as JSON or as a human trace, with exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from policy_engine.cli.main import cli

pytestmark = pytest.mark.e2e

SHELL = json.dumps({"name": "shell_exec", "arguments": {}})
PERSONAL = json.dumps({"name": "send", "arguments": {"email": "ann@example.com"}})


def _eval(runner: CliRunner, *args: str, payload: str) -> tuple[int, str]:
    result = runner.invoke(
        cli,
        ["eval", *args, "--event", "tools/call", "--phase", "request", "--payload", "-"],
        input=payload,
    )
    return result.exit_code, result.output


def test_denied_call_exits_1_with_the_sep_result(runner: CliRunner, policies: Path) -> None:
    code, output = _eval(runner, str(policies), payload=SHELL)
    assert code == 1
    result = json.loads(output)
    assert result["status"] == "validation_failed"
    assert result["abortedAt"] == {
        "interceptor": "tool-guard",
        "reason": "tool is blocked by policy",
        "type": "validation",
    }
    # The audit logger (audit mode) notes the call as an info; it never blocks.
    assert result["validationSummary"] == {"errors": 1, "warnings": 0, "infos": 1}
    assert "finalPayload" not in result


def test_allowed_call_exits_0_with_the_redacted_payload(runner: CliRunner, policies: Path) -> None:
    code, output = _eval(runner, str(policies), payload=PERSONAL)
    assert code == 0
    result = json.loads(output)
    assert result["status"] == "success"
    assert result["finalPayload"] == {"name": "send", "arguments": {"email": "[EMAIL]"}}
    order = [r["interceptor"] for r in result["results"]]
    # sending: mutators (by priority) before validators
    assert order[:2] == ["secret-redactor", "pii-redactor"]
    assert set(order[2:]) == {"tool-guard", "admin-only-tools", "argument-guard", "audit-logger"}


def test_receiving_side_validates_before_mutating(runner: CliRunner, policies: Path) -> None:
    code, output = _eval(runner, str(policies), "--side", "receiving", payload=PERSONAL)
    assert code == 0
    types = [r["type"] for r in json.loads(output)["results"]]
    assert types == ["validation"] * 4 + ["mutation"] * 2


def test_explain_names_rules_and_masks_values(runner: CliRunner, policies: Path) -> None:
    code, output = _eval(runner, str(policies), "--explain", payload=PERSONAL)
    assert code == 0
    assert "tools/call request (sending): success" in output
    assert "redact arguments.email: a************m (15 chars) -> [EMAIL]" in output
    assert "-> [EMAIL] (pii.policy:17)" in output  # named relative to the folder given
    assert str(policies) not in output
    assert "ann@example.com" not in output


def test_explain_of_a_denial_names_the_firing_rule(runner: CliRunner, policies: Path) -> None:
    code, output = _eval(runner, str(policies), "--explain", payload=SHELL)
    assert code == 1
    assert "* error at name: tool is blocked by policy" in output
    assert "aborted at tool-guard (validation): tool is blocked by policy" in output


def test_only_restricts_the_chain(runner: CliRunner, policies: Path) -> None:
    code, output = _eval(runner, str(policies), "--only", "pii-redactor", payload=SHELL)
    assert code == 0
    assert [r["interceptor"] for r in json.loads(output)["results"]] == ["pii-redactor"]


def test_only_with_an_unknown_name_is_an_error_with_a_did_you_mean(
    runner: CliRunner, policies: Path
) -> None:
    code, output = _eval(runner, str(policies), "--only", "pii-redacter", payload=SHELL)
    assert code == 2
    assert "no interceptor named `pii-redacter` to select" in output
    assert "did you mean `pii-redactor`?" in output


def test_only_against_a_remote_server_checks_names_too(policies: Path) -> None:
    code, output = _eval_process(
        "--server", _serve_command(policies), "--only", "tool-gard", payload=SHELL
    )
    assert code == 2, output
    assert "did you mean `tool-guard`?" in output


def test_config_reaches_the_interceptor(runner: CliRunner, policies: Path) -> None:
    payload = json.dumps({"messages": [], "maxTokens": 9000, "systemPrompt": "x"})
    base = ["eval", str(policies), "--event", "sampling/createMessage", "--phase", "request"]
    denied = runner.invoke(cli, [*base, "--payload", "-"], input=payload)
    assert denied.exit_code == 1
    allowed = runner.invoke(
        cli,
        [*base, "--payload", "-", "--config", '{"sampling-guard": {"maxTokens": 10000}}'],
        input=payload,
    )
    assert allowed.exit_code == 0, allowed.output


def test_bad_payload_json_is_a_usage_error(runner: CliRunner, policies: Path) -> None:
    code, output = _eval(runner, str(policies), payload="{not json")
    assert code == 2
    assert "payload is not valid JSON" in output


def test_policy_errors_are_reported_not_raised(runner: CliRunner, tmp_path: Path) -> None:
    bad = tmp_path / "bad.policy"
    bad.write_text('validator v {\n  on tools/call request\n  deny if $.name = "x" \n}\n')
    code, output = _eval(runner, str(bad), payload=SHELL)
    assert code == 1
    assert "bad.policy:3:18: error[E004]: unexpected `=`" in output


def _eval_process(*args: str, payload: str) -> tuple[int, str]:
    """The real CLI in a subprocess: a remote stdio server needs real file descriptors."""
    import subprocess
    import sys

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "policy_engine.cli.main",
            "eval",
            *args,
            "--event",
            "tools/call",
            "--phase",
            "request",
            "--payload",
            "-",
        ],
        input=payload,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode, done.stdout + done.stderr


def _serve_command(folder: Path) -> str:
    import shlex
    import sys

    return shlex.join([sys.executable, "-m", "policy_engine.cli.main", "serve", str(folder)])


def test_eval_against_a_remote_server(policies: Path) -> None:
    code, output = _eval_process("--server", _serve_command(policies), payload=SHELL)
    assert code == 1, output
    result = json.loads(output)
    assert result["status"] == "validation_failed"
    assert result["abortedAt"]["interceptor"] == "tool-guard"


def test_local_and_remote_entries_with_the_same_name_stay_apart(tmp_path: Path) -> None:
    local = tmp_path / "local.policy"
    local.write_text("mutator tag {\n  on tools/call request\n  set $.arguments.local = true\n}\n")
    remote_dir = tmp_path / "remote"
    remote_dir.mkdir()
    (remote_dir / "remote.policy").write_text(
        "mutator tag {\n  on tools/call request\n  set $.arguments.remote = true\n}\n"
    )
    code, output = _eval_process(
        str(local), "--server", _serve_command(remote_dir), payload=PERSONAL
    )
    assert code == 0, output
    result = json.loads(output)
    assert [r["interceptor"] for r in result["results"]] == ["tag", "tag"]
    assert result["finalPayload"]["arguments"] == {
        "email": "ann@example.com",
        "local": True,
        "remote": True,
    }

"""Local tools (eval, test, diff) run messages without a session id in one synthetic
session per run and say so: a flow rule then judges what the messages carry, where
it used to deny every message for want of a session."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from policy_engine.cli.main import cli

GUARD = """\
validator guard {
  on tools/call request
  on tools/call response
  server filesystem tools ["read_file"]
  server database tools ["write_query"]
  deny flow AWS_ACCESS_KEY across servers code relaybleed
}
"""
CLEAN = json.dumps({"name": "write_query", "arguments": {"sql": "select 1"}})


def test_eval_without_a_context_judges_the_message(tmp_path: Path) -> None:
    (tmp_path / "guard.policy").write_text(GUARD)
    result = CliRunner().invoke(
        cli,
        ["eval", str(tmp_path), "--event", "tools/call", "--phase", "request", "--payload", "-"],
        input=CLEAN,
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["status"] == "success"
    assert "synthetic session `policyc-eval`" in result.stderr


def test_test_blocks_without_a_context_share_one_synthetic_session(tmp_path: Path) -> None:
    (tmp_path / "guard.policy").write_text(
        GUARD
        + """
test "a clean write" {
  given tools/call request {"name": "write_query", "arguments": {"sql": "select 1"}}
  expect allow
}

test "a read returns a key" {
  given tools/call response {"content": [{"type": "text", "text": "AKIAIOSFODNN7EXAMPLE"}]}
  context {"server": "filesystem"}
  expect allow
}

test "which then cannot reach the database" {
  given tools/call request {"name": "write_query", "arguments": {"sql": "AKIAIOSFODNN7EXAMPLE"}}
  expect deny
  expect code relaybleed
}
"""
    )
    result = CliRunner().invoke(cli, ["test", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "3 passed, 0 failed" in result.output
    assert "synthetic session `policyc-test`" in result.output


def test_real_traffic_without_a_session_still_fails_closed(tmp_path: Path) -> None:
    from policy_engine.compiler import compile_sources

    result = compile_sources({"guard.policy": GUARD}).invoke_sync(
        "guard", "tools/call", "request", json.loads(CLEAN)
    )
    assert result.valid is False  # type: ignore[union-attr]


def test_diff_runs_each_set_in_a_synthetic_session_and_says_so(tmp_path: Path) -> None:
    old, new = tmp_path / "old.policy", tmp_path / "new.policy"
    old.write_text(GUARD)
    new.write_text(GUARD.replace("across servers", "to database"))
    result = CliRunner().invoke(
        cli, ["diff", str(old), str(new), "--budget", "20", "--time-limit", "20"]
    )
    assert result.exit_code in (0, 1), result.output
    assert "synthetic session `policyc-diff-old`" in result.stderr
    assert "synthetic session `policyc-diff-new`" in result.stderr

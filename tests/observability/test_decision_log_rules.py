"""A decision log line names the rules that fired (code, source, the message as written),
so an audit-mode rollout can be watched, and never carries what a message's `{value}` or
`{path}` would have echoed from the payload."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest
from gateway_harness import ROOT, recorder
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from server_harness import invoke

pytestmark = pytest.mark.e2e

SECRET = "sk_live_do_not_log_4f2a"
POLICY = """validator no-live-keys "Live keys stay out of tool calls" {
  on tools/call request
  deny if any $.arguments.* matches /sk_live_/ "a live key in {path}: {value}" code live-key
  warn if $.name == "shell_exec" "shell use is watched" code shell-watch
}
"""


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]


async def test_serve_logs_which_rules_fired_without_payload_content(tmp_path: Path) -> None:
    policy = tmp_path / "keys.policy"
    policy.write_text(POLICY)
    log = tmp_path / "decisions.jsonl"
    argv = ["-m", "policy_engine.cli.main", "serve", str(policy), "--decision-log", str(log)]
    params = StdioServerParameters(command=sys.executable, args=argv, cwd=str(ROOT))
    payload = {"name": "shell_exec", "arguments": {"command": f"export K={SECRET}"}}
    with anyio.fail_after(60):
        async with Client(stdio_client(params), mode="legacy") as client:
            result = await invoke(client, name="no-live-keys", payload=payload)
    assert result["valid"] is False
    assert SECRET in json.dumps(result)  # the client asked for the echo; the log must not
    text = log.read_text()
    assert SECRET not in text and "export K" not in text
    (line,) = _lines(log)
    assert line["rules"] == [
        {
            "rule": "live-key",
            "source": "keys.policy:3",
            "message": "a live key in {path}: {value}",
            "severity": "error",
        },
        {
            "rule": "shell-watch",
            "source": "keys.policy:4",
            "message": "shell use is watched",
            "severity": "warn",
        },
    ]


async def test_gateway_audit_rollout_shows_what_would_have_been_blocked(tmp_path: Path) -> None:
    policy = tmp_path / "keys.policy"
    policy.write_text(POLICY)
    log = tmp_path / "decisions.jsonl"
    config = tmp_path / "gateway.toml"
    config.write_text(
        f'policies = ["{policy}"]\n'
        f'decision_log = "{log}"\n'
        "[overrides.no-live-keys]\n"
        'mode = "audit"\n'
    )
    argv = ["-m", "policy_engine.cli.main", "gateway", "--config", str(config)]
    argv += ["--backend", recorder(tmp_path / "calls.log")]
    params = StdioServerParameters(command=sys.executable, args=argv, cwd=str(ROOT))
    with anyio.fail_after(90):
        async with Client(stdio_client(params), mode="legacy") as client:
            passed = await client.call_tool("echo", {"text": SECRET})
    assert not passed.is_error
    text = log.read_text()
    assert SECRET not in text
    (audited,) = [
        entry
        for line in _lines(log)
        for entry in line["interceptors"]  # type: ignore[attr-defined]
        if entry.get("rules")
    ]
    assert audited["mode"] == "audit" and audited["valid"] is False
    assert [rule["rule"] for rule in audited["rules"]] == ["live-key"]
    assert audited["rules"][0]["message"] == "a live key in {path}: {value}"

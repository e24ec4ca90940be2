"""The TOML config file and its --check, the decision log, and --verbose tracing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner, Result
from gateway_harness import (
    RECORDER,
    ROOT,
    TEST_POLICIES,
    gateway_process_argv,
    local_client,
    text_of,
)

from policy_engine.cli.main import cli
from policy_engine.gateway import ConfigError, load_config

# The tests that start backends or the gateway's own process carry the e2e mark.

CASES = json.loads((Path(__file__).parent / "config_cases.json").read_text())


def _check(path: Path) -> Result:
    """``policyc gateway --config PATH --check`` through the command's own entry point:
    what it exits with and prints is the subject, not the process around it."""
    return CliRunner().invoke(cli, ["gateway", "--config", str(path), "--check"])


GOOD = f"""
policies = ["{ROOT / "policies" / "tool-guard.policy"}", "{TEST_POLICIES}"]
side = "client"
block_style = "result"
decision_log = "-"

[[backends]]
name = "rec"
command = ["{sys.executable}", "{RECORDER}"]
timeout_ms = 20000
on_exit = "restart"
max_restarts = 2

[overrides.tool-guard]
timeout_ms = 1000
"""


def test_good_config_checks(tmp_path: Path) -> None:
    config = tmp_path / "gateway.toml"
    config.write_text(GOOD)
    done = _check(config)
    assert done.exit_code == 0, done.stderr
    options = load_config(config)
    assert [b.name for b in options.backends] == ["rec"]
    assert options.backends[0].timeout_s == 20.0
    assert options.block_style == "result"


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_bad_config_names_file_and_line(tmp_path: Path, case: dict[str, str]) -> None:
    config = tmp_path / "gateway.toml"
    config.write_text(case["toml"])
    with pytest.raises(ConfigError) as caught:
        load_config(config)
    assert str(caught.value) == f"{config}:{case['line']}: error: {case['message']}"
    done = _check(config)
    assert done.exit_code == 1
    assert f"{config}:{case['line']}: error:" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.e2e
async def test_config_drives_the_gateway_and_logs_decisions(tmp_path: Path) -> None:
    config = tmp_path / "gateway.toml"
    config.write_text(GOOD.replace('decision_log = "-"', f'decision_log = "{tmp_path / "d.log"}"'))
    with anyio.fail_after(30):
        async with local_client("--config", str(config), "--verbose", policies=[]) as client:
            blocked = await client.call_tool("shell_exec", {"command": "rm-xyzzy"})
            assert blocked.is_error
            assert text_of(await client.call_tool("echo", {"text": "ok"})) == "ok"
    lines = [json.loads(line) for line in (tmp_path / "d.log").read_text().splitlines()]
    denied = [r for r in lines if r["event"] == "tools/call" and r["decision"] != "success"]
    assert denied and denied[0]["server"] == "rec" and denied[0]["phase"] == "request"
    assert denied[0]["abortedAt"] == "tool-guard"
    assert {i["name"] for i in denied[0]["interceptors"]} >= {"tool-guard"}
    assert all("payload" not in r for r in lines)
    assert "rm-xyzzy" not in (tmp_path / "d.log").read_text()


def test_the_documented_example_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = (ROOT / "docs" / "gateway.md").read_text()
    example = page.split("```toml\n", 1)[1].split("```", 1)[0]
    (tmp_path / "policies").symlink_to(ROOT / "policies")
    config = tmp_path / "gateway.toml"
    config.write_text(example)
    monkeypatch.setenv("CRM_TOKEN", "t1")
    monkeypatch.setenv("GATEWAY_TOKEN", "t2")
    options = load_config(config)
    assert [b.name for b in options.backends] == ["files", "crm"]
    assert options.backends[1].bearer_token == "t1"
    assert options.listen == ("127.0.0.1", 8080)
    assert [s.id for s in options.interceptors] == ["dlp"]
    assert options.overrides["dlp-scan"].fail_open is True


@pytest.mark.e2e
def test_verbose_traces_to_stderr_and_never_to_stdout(tmp_path: Path) -> None:
    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    }
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "x"}},
        },
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "shell_exec", "arguments": {"command": "ls"}},
        },
    ]
    done = subprocess.run(
        gateway_process_argv(
            "--backend", f"rec={sys.executable} {RECORDER}", "--verbose", "--decision-log", "-"
        ),
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=str(ROOT),
    )
    # A blocked call needs no backend, so it may be answered before an earlier one.
    replies = sorted((json.loads(line) for line in done.stdout.splitlines()), key=lambda r: r["id"])
    assert [r["id"] for r in replies] == [1, 2, 3]
    assert replies[1]["result"]["content"][0]["text"] == "x"
    assert replies[2]["error"]["code"] == -32602
    assert "client -> tools/call (id 2)" in done.stderr
    assert '"decision":"validation_failed"' in done.stderr

"""/metrics, /healthz and /readyz of real `policyc serve --http`, `policyc gateway --http` and a
stdio gateway's `--metrics-listen`, scraped over HTTP and read with prometheus_client's parser."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import httpx2
import pytest
from gateway_harness import ROOT, free_port, gateway_argv, gateway_client, recorder, running
from mcp import Client
from mcp.shared.exceptions import MCPError
from scrape import label_values, scrape, status, value
from server_harness import http_client, invoke

pytestmark = pytest.mark.e2e

GUARD = ROOT / "policies" / "tool-guard.policy"
SECRETS = ROOT / "policies" / "secrets.policy"
CLI = [sys.executable, "-m", "policy_engine.cli.main"]


async def test_serve_counts_decisions_and_never_a_name_a_client_chose(tmp_path: Path) -> None:
    """Attack: invoke 30 made-up interceptor names to grow the series without bound. They
    are counted under one `(unknown)` label; and a decision log nobody reads (a FIFO)
    shows up as dropped lines instead of going unnoticed."""
    fifo = tmp_path / "decisions.fifo"
    os.mkfifo(fifo)
    port = free_port()
    argv = [*CLI, "serve", str(GUARD), "--http", f"127.0.0.1:{port}"]
    argv += ["--decision-log", str(fifo), "--decision-log-queue", "1"]
    with running(argv, port) as url:
        base = url.removesuffix("/mcp")
        with anyio.fail_after(90):
            async with http_client(url) as client:
                denied = {"name": "shell_exec", "arguments": {"command": "ls"}}
                allowed = {"name": "read_file", "arguments": {"path": "a"}}
                await invoke(client, name="tool-guard", payload=denied)
                await invoke(client, name="tool-guard", payload=allowed)
                for index in range(30):
                    with pytest.raises(MCPError):
                        await invoke(client, name=f"made-up-{index}")
        samples = scrape(base)
        health = status(f"{base}/healthz")
        ready = status(f"{base}/readyz")
    decisions = "policyc_decisions_total"
    assert value(samples, decisions, interceptor="tool-guard", outcome="invalid") == 1
    assert value(samples, decisions, interceptor="tool-guard", outcome="valid") == 1
    assert value(samples, decisions, interceptor="(unknown)", outcome="error") == 30
    assert not any(name.startswith("made-up") for name in label_values(samples, "interceptor"))
    count = "policyc_interceptor_duration_seconds_count"
    assert value(samples, count, interceptor="tool-guard") == 2
    assert value(samples, "policyc_decision_log_dropped_lines_total") >= 1
    assert value(samples, "policyc_policies_loaded") == 1
    assert health == (200, "ok\n") and ready == (200, "ready\n")


async def test_http_gateway_counts_chains_backend_errors_restarts_and_sessions(
    tmp_path: Path,
) -> None:
    port = free_port()
    argv = [sys.executable, *gateway_argv("--http", f"127.0.0.1:{port}", "--backend-timeout", "2")]
    argv += ["--backend", recorder(tmp_path / "calls.log")]
    with running(argv, port) as url:
        base = url.removesuffix("/mcp")
        with anyio.fail_after(120):
            async with Client(url, mode="legacy") as client:
                await client.call_tool("echo", {"text": "hello"})
                with pytest.raises(MCPError):
                    await client.call_tool("shell_exec", {"command": "ls"})
                with pytest.raises(MCPError):
                    await client.call_tool("hang", {})
                with pytest.raises(MCPError):
                    await client.call_tool("crash", {})
                await client.call_tool("echo", {"text": "again"})  # the restarted backend
                during = scrape(base)
                ready = status(f"{base}/readyz")
    assert value(during, "policyc_chain_runs_total", status="validation_failed") >= 1
    assert value(during, "policyc_chain_runs_total", status="success") >= 2
    guard = {"interceptor": "tool-guard", "outcome": "invalid"}
    assert value(during, "policyc_decisions_total", **guard) == 1
    assert value(during, "policyc_chain_duration_seconds_count") >= 3
    assert value(during, "policyc_backend_errors_total", backend="rec", kind="timeout") == 1
    assert value(during, "policyc_backend_errors_total", backend="rec", kind="unavailable") == 1
    assert value(during, "policyc_backend_restarts_total", backend="rec") == 1
    assert value(during, "policyc_sessions_active") == 1
    assert value(during, "policyc_backends_up", backend="rec") == 1
    assert ready == (200, "ready\n")


async def test_stdio_gateway_serves_metrics_on_its_own_listener(tmp_path: Path) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with anyio.fail_after(90):
        async with gateway_client(
            "--backend", recorder(tmp_path / "calls.log"), "--metrics-listen", f"127.0.0.1:{port}"
        ) as client:
            await client.call_tool("echo", {"text": "hello"})
            samples = await anyio.to_thread.run_sync(scrape, base)
            ready = await anyio.to_thread.run_sync(status, f"{base}/readyz")
            missing = await anyio.to_thread.run_sync(status, f"{base}/mcp")
    assert value(samples, "policyc_chain_runs_total", status="success") >= 1
    assert value(samples, "policyc_sessions_total") == 1
    assert value(samples, "policyc_backends_up", backend="rec") == 1
    assert ready == (200, "ready\n") and missing[0] == 404


def test_metrics_listen_on_a_taken_port_is_a_usage_error() -> None:
    import socket
    import subprocess

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [*CLI, "serve", str(GUARD), "--metrics-listen", f"127.0.0.1:{port}"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    assert done.returncode == 2
    assert f"--metrics-listen 127.0.0.1:{port}" in done.stderr
    assert "Traceback" not in done.stderr


def test_with_a_bearer_token_metrics_need_it_and_probes_do_not(tmp_path: Path) -> None:
    """Attack: read interceptor and backend names from /metrics of a gateway that asks
    every MCP client for a token, without one."""
    port = free_port()
    argv = [sys.executable, *gateway_argv("--http", f"127.0.0.1:{port}")]
    argv += ["--backend", recorder(tmp_path / "calls.log"), "--auth-token-env", "GW_TOKEN"]
    with running(argv, port, env={"GW_TOKEN": "s3cret-token"}) as url:
        base = url.removesuffix("/mcp")
        anonymous = httpx2.get(f"{base}/metrics", timeout=30)
        wrong = httpx2.get(f"{base}/metrics", headers={"authorization": "Bearer no"}, timeout=30)
        granted = httpx2.get(
            f"{base}/metrics", headers={"authorization": "Bearer s3cret-token"}, timeout=30
        )
        health, ready = status(f"{base}/healthz"), status(f"{base}/readyz")
    assert anonymous.status_code == wrong.status_code == 401
    assert "policyc_" not in anonymous.text + wrong.text
    assert granted.status_code == 200 and "policyc_chain_runs_total" in granted.text
    assert health == (200, "ok\n") and ready == (200, "ready\n")

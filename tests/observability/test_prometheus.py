"""A real Prometheus server (Debian's `prometheus` package) scrapes a real HTTP gateway."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import anyio
import httpx2
import pytest
from gateway_harness import free_port, gateway_argv, recorder, running, wait_for_port
from mcp import Client
from mcp.shared.exceptions import MCPError

pytestmark = pytest.mark.e2e


def _query(base: str, expression: str) -> list[dict[str, object]]:
    response = httpx2.get(f"{base}/api/v1/query", params={"query": expression}, timeout=10)
    body = response.json()
    assert body["status"] == "success", body
    result: list[dict[str, object]] = body["data"]["result"]
    return result


def _until(base: str, expression: str, limit: float = 90) -> list[dict[str, object]]:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        found = _query(base, expression)
        if found:
            return found
        time.sleep(0.5)
    raise AssertionError(f"Prometheus never had {expression}")


async def test_prometheus_scrapes_the_gateway(tmp_path: Path) -> None:
    port = free_port()
    argv = [sys.executable, *gateway_argv("--http", f"127.0.0.1:{port}")]
    argv += ["--backend", recorder(tmp_path / "calls.log")]
    prometheus_port = free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n"
        "scrape_configs:\n"
        "  - job_name: policyc\n"
        f"    static_configs:\n      - targets: ['127.0.0.1:{port}']\n"
    )
    with running(argv, port) as url:
        with anyio.fail_after(90):
            async with Client(url, mode="legacy") as client:
                with pytest.raises(MCPError):
                    await client.call_tool("shell_exec", {"command": "ls"})
        prometheus = subprocess.Popen(
            [
                "prometheus",
                f"--config.file={config}",
                f"--storage.tsdb.path={tmp_path / 'data'}",
                f"--web.listen-address=127.0.0.1:{prometheus_port}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_for_port(prometheus_port, prometheus, limit=60)
            base = f"http://127.0.0.1:{prometheus_port}"
            up = await anyio.to_thread.run_sync(_until, base, 'up{job="policyc"} == 1')
            blocked = await anyio.to_thread.run_sync(
                _until,
                base,
                'policyc_decisions_total{interceptor="tool-guard",outcome="invalid"}',
            )
        finally:
            prometheus.terminate()
            prometheus.wait(30)
    assert up[0]["value"][1] == "1"  # type: ignore[index]
    assert blocked[0]["value"][1] == "1"  # type: ignore[index]

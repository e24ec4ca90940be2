"""The official TypeScript SDK as an unmodified client of the gateway, over stdio and HTTP
(stateful, and a `--stateless` replica). The installed SDK speaks the 2025 handshake era
only, so its sessions are 2025-11-25 ones."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from balancer import FLOW_KEY
from gateway_harness import HERE, ROOT, calls, gateway_argv, http_gateway, recorder

pytestmark = pytest.mark.e2e

SCRIPT = HERE / "ts" / "gateway_client.mjs"


async def run_ts_client(*args: str) -> dict[str, Any]:
    node = shutil.which("node")
    assert node is not None, "Node.js is required for the TypeScript client test"
    with anyio.fail_after(60):
        done = await anyio.run_process([node, str(SCRIPT), *args], cwd=str(ROOT), check=False)
    assert done.returncode == 0, done.stderr.decode()
    report: dict[str, Any] = json.loads(done.stdout)
    return report


@pytest.mark.parametrize("transport", ["stdio", "http", "stateless"])
async def test_typescript_client_through_the_gateway(
    tmp_path: Path, transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "calls.log"
    if transport == "stdio":
        report = await run_ts_client(
            "stdio", sys.executable, *gateway_argv("--backend", recorder(log))
        )
    elif transport == "http":
        with http_gateway("--backend", recorder(log)) as url:
            report = await run_ts_client("http", url)
    else:
        monkeypatch.setenv("FLOW_KEY", FLOW_KEY)
        stateless = ("--stateless", "--flow-key-env", "FLOW_KEY")
        with http_gateway("--backend", recorder(log), *stateless) as url:
            report = await run_ts_client("http", url)
    assert report["serverVersion"]["name"] == "recorder"
    assert "echo" in report["tools"] and "internal_debug" not in report["tools"]
    assert report["echo"] == {"ok": True, "text": "from ts", "isError": False}
    assert report["blocked"]["code"] == -32602
    assert report["blocked"]["data"]["validationErrors"][0]["interceptor"] == "tool-guard"
    assert report["redacted"]["ok"] and "jane.doe@example.com" not in report["redacted"]["text"]
    assert report["hidden"]["code"] == -32602
    assert [c["tool"] for c in calls(log)] == ["echo", "lookup_user", "summarize"]
    if transport == "stateless":  # no stream carries the backend's sampling request
        assert report["sampled"]["code"] == -32600
        return
    assert report["sampled"]["ok"]
    assert "carol@example.com" not in report["sampled"]["text"]

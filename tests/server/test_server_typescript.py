"""The official TypeScript MCP SDK as a second-language client, over stdio and HTTP."""

from __future__ import annotations

import json
import shutil
import sys
from typing import Any

import anyio
import pytest
from server_harness import FIXTURE, HERE, HttpServer

pytestmark = pytest.mark.e2e

SCRIPT = HERE / "ts" / "client.mjs"
EXTENSION = "io.modelcontextprotocol/interceptors"


async def run_ts_client(*args: str) -> dict[str, Any]:
    node = shutil.which("node")
    assert node is not None, "Node.js is required for the TypeScript client test"
    with anyio.fail_after(60):
        done = await anyio.run_process([node, str(SCRIPT), *args], cwd=str(HERE), check=False)
    assert done.returncode == 0, done.stderr.decode()
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def check_report(report: dict[str, Any]) -> None:
    assert report["serverVersion"]["name"] == "policyc"
    assert EXTENSION in report["capabilities"]["experimental"]
    assert report["capabilities"]["experimental"][EXTENSION]["supportedEvents"][0] == "tools/call"
    names = [d["name"] for d in report["list"]["result"]["interceptors"]]
    assert names[:3] == ["allow-all", "deny-all", "uppercase-note"]
    prompt_names = [d["name"] for d in report["listPrompts"]["result"]["interceptors"]]
    assert prompt_names == ["prompt-guard", "everything"]
    assert report["allow"]["result"]["valid"] is True
    assert report["deny"]["result"]["messages"][0]["message"] == "denied by policy"
    assert report["mutate"]["result"]["payload"]["arguments"]["note"] == "HELLO"
    assert (report["unknown"]["ok"], report["unknown"]["code"]) == (False, -32602)
    assert report["crash"]["code"] == -32603
    assert report["crash"]["data"]["interceptor"] == "crash"
    assert report["timeout"]["code"] == -32000
    assert report["timeout"]["data"]["reason"] == "timeout"


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_typescript_sdk_client(transport: str, shared_http: HttpServer) -> None:
    if transport == "stdio":
        report = await run_ts_client("stdio", sys.executable, str(FIXTURE))
    else:
        report = await run_ts_client("http", shared_http.url)
    check_report(report)

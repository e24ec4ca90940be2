"""The same policies decide the same way through the gateway, the server middleware, FastMCP's
middleware and the client wrapper, on the same payloads (cases in same_decisions.json)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from gateway_harness import RECORDER, local_client, recorder, text_of
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from policy_engine.compiler import compile_policies
from policy_engine.integrations import PolicyBlocked, PolicyClient

pytestmark = pytest.mark.e2e

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
POLICY_FILES = [HERE / "policies" / "integ_test.policy", ROOT / "policies" / "secrets.policy"]
CASES = json.loads((HERE / "same_decisions.json").read_text())

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]


def _interceptors(data: Any) -> list[str]:
    return [item["interceptor"] for item in (data or {}).get("validationErrors", [])]


@asynccontextmanager
async def host(kind: str, tmp: Path) -> AsyncIterator[Call]:
    log = tmp / "calls.log"
    if kind == "gateway":
        async with local_client("--backend", recorder(log), policies=POLICY_FILES) as client:
            yield client.call_tool
    elif kind in ("middleware", "fastmcp"):
        script = "policy_server.py" if kind == "middleware" else "fastmcp_server.py"
        # The SDK passes a child only a few variables: keep PYTHONPATH, so it runs this checkout.
        params = StdioServerParameters(
            command=sys.executable, args=[str(HERE / script)], env=dict(os.environ)
        )
        async with Client(stdio_client(params), mode="legacy") as client:
            yield client.call_tool
    else:
        params = StdioServerParameters(command=sys.executable, args=[str(RECORDER), str(log)])
        async with Client(stdio_client(params), mode="legacy") as raw:
            yield PolicyClient(compile_policies(POLICY_FILES)).bind(raw).call_tool


async def decide(call: Call, tool: str, arguments: dict[str, Any]) -> list[Any]:
    try:
        return ["pass", text_of(await call(tool, arguments))]
    except MCPError as err:
        return ["block", _interceptors(err.data)]
    except PolicyBlocked as err:
        return ["block", _interceptors(err.error.data)]


@pytest.mark.parametrize("kind", ["gateway", "middleware", "fastmcp", "client"])
async def test_same_decisions(kind: str, tmp_path: Path) -> None:
    with anyio.fail_after(90):
        async with host(kind, tmp_path) as call:
            seen = {
                case["id"]: await decide(call, case["tool"], case["arguments"]) for case in CASES
            }
    assert seen == {case["id"]: case["expect"] for case in CASES}

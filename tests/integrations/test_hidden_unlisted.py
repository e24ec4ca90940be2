"""Attack: call what a filtered list hides without ever listing it. In-code hosts list
through the chain first when the connection has not (a client that skips tools/list, or
the 2026-07-28 protocol, where each request is its own connection), so it stays refused;
so do the gateway, for every session, and the client wrapper."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import fastmcp
import pytest
from gateway_harness import RECORDER, calls, local_client, recorder, text_of
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from policy_engine.compiler import compile_policies
from policy_engine.integrations import PolicyBlocked, PolicyClient

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from fastmcp_server import POLICIES  # noqa: E402
from fastmcp_server import build as build_fastmcp  # noqa: E402
from policy_server import build as build_mcp  # noqa: E402

pytestmark = pytest.mark.e2e  # the gateway case starts a gateway and a backend


def _items(data: Any) -> list[str]:
    return [item["interceptor"] for item in (data or {}).get("validationErrors", [])]


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_the_sdk_middleware_refuses_a_hidden_tool_nobody_listed(mode: str) -> None:
    options = {"mode": "legacy"} if mode == "legacy" else {}
    with anyio.fail_after(60):
        async with Client(build_mcp(), **options) as client:
            with pytest.raises(MCPError) as caught:
                await client.call_tool("internal_debug", {})
            listed = [tool.name for tool in (await client.list_tools()).tools]
            passed = await client.call_tool("echo", {"text": "still works"})
    assert _items(caught.value.data) == ["integ-hide"]
    assert "internal_debug" not in listed and not passed.is_error


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_the_fastmcp_middleware_refuses_a_hidden_tool_nobody_listed(mode: str) -> None:
    options = {"mode": "legacy"} if mode == "legacy" else {}
    with anyio.fail_after(60):
        # The SDK client in memory takes an SDK server: FastMCP runs on one.
        async with Client(build_fastmcp()._mcp_server, **options) as client:
            with pytest.raises(MCPError) as caught:
                await client.call_tool("internal_debug", {})
    assert _items(caught.value.data) == ["integ-hide"]


async def test_fastmcp_own_client_is_refused_too() -> None:
    with anyio.fail_after(60):
        async with fastmcp.Client(build_fastmcp()) as client:
            with pytest.raises(MCPError) as caught:
                await client.call_tool("internal_debug", {})
    assert _items(caught.value.data) == ["integ-hide"]


async def test_the_gateway_refuses_a_hidden_tool_nobody_listed(tmp_path: Path) -> None:
    with anyio.fail_after(90):
        async with local_client("--backend", recorder(tmp_path / "calls.log")) as client:
            with pytest.raises(MCPError) as caught:
                await client.call_tool("internal_debug", {})
            passed = await client.call_tool("echo", {"text": "still works"})
    assert _items(caught.value.data) == ["hide-internal"]
    assert text_of(passed) == "still works"
    assert [call["tool"] for call in calls(tmp_path / "calls.log")] == ["echo"]


async def test_the_client_wrapper_refuses_a_hidden_tool_nobody_listed(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    params = StdioServerParameters(command=sys.executable, args=[str(RECORDER), str(log)])
    with anyio.fail_after(90):
        async with Client(stdio_client(params), mode="legacy") as raw:
            client = PolicyClient(compile_policies(POLICIES)).bind(raw)
            with pytest.raises(PolicyBlocked) as caught:
                await client.call_tool("internal_debug", {})
            passed = await client.call_tool("echo", {"text": "still works"})
    assert _items(caught.value.error.data) == ["integ-hide"]
    assert text_of(passed) == "still works"
    assert [call["tool"] for call in calls(log)] == ["echo"]

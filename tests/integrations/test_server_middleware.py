"""Policies installed in a real MCPServer, seen by the real SDK client over stdio and HTTP."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from gateway_harness import free_port, raw_request, running, text_of
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from policy_engine.server import EXTENSION_ID

pytestmark = pytest.mark.e2e

HERE = Path(__file__).resolve().parent
SERVER = HERE / "policy_server.py"


@asynccontextmanager
async def connected(transport: str) -> AsyncIterator[Client]:
    if transport == "stdio":
        # The SDK passes a child only a few variables: keep PYTHONPATH, so it runs this checkout.
        params = StdioServerParameters(
            command=sys.executable, args=[str(SERVER)], env=dict(os.environ)
        )
        async with Client(stdio_client(params), mode="legacy") as client:
            yield client
        return
    port = free_port()
    with running([sys.executable, str(SERVER), str(port)], port) as url:
        async with Client(url, mode="legacy") as client:
            yield client


async def check_passed_call(client: Client) -> None:
    with anyio.fail_after(30):
        result = await client.call_tool("echo", {"text": "hello"})
    assert text_of(result) == "hello"
    assert not result.is_error


async def check_blocked_call_is_the_sep_error(client: Client) -> None:
    with anyio.fail_after(30), pytest.raises(MCPError) as caught:
        await client.call_tool("shell_exec", {"command": "ls"})
    assert caught.value.code == -32602
    assert caught.value.message == "Interceptor validation failed"
    items = caught.value.data["validationErrors"]
    assert [item["interceptor"] for item in items] == ["integ-guard"]
    assert "ls" not in str(caught.value.data)


async def check_result_is_redacted_before_it_leaves(client: Client) -> None:
    with anyio.fail_after(30):
        result = await client.call_tool("fetch_config", {})
    text = text_of(result)
    assert "ghp_" not in text
    assert "[SECRET:GITHUB_TOKEN]" in text and "region=eu" in text


async def check_hidden_tool_is_not_listed_and_not_callable(client: Client) -> None:
    with anyio.fail_after(30):
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert "internal_debug" not in names and "echo" in names
        with pytest.raises(MCPError) as caught:
            await client.call_tool("internal_debug", {})
    assert caught.value.code == -32602
    assert "hidden by policy" in caught.value.data["validationErrors"][0]["message"]


async def check_principal_rule_without_a_principal_blocks(client: Client) -> None:
    with anyio.fail_after(30), pytest.raises(MCPError) as caught:
        await client.call_tool("deploy", {"target": "prod"})
    assert caught.value.data["validationErrors"][0]["interceptor"] == "integ-needs-admin"


async def check_interceptors_are_not_exposed_by_default(client: Client) -> None:
    assert EXTENSION_ID not in (client.server_capabilities.experimental or {})
    for method in ("interceptors/list", "interceptor/invoke"):
        with anyio.fail_after(30), pytest.raises(MCPError) as caught:
            await raw_request(client, method, {})
        assert caught.value.code == -32601, method


CHECKS = [
    check_passed_call,
    check_blocked_call_is_the_sep_error,
    check_result_is_redacted_before_it_leaves,
    check_hidden_tool_is_not_listed_and_not_callable,
    check_principal_rule_without_a_principal_blocks,
    check_interceptors_are_not_exposed_by_default,
]


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_policies_in_a_high_level_server(transport: str) -> None:
    """One server process per transport; every check on the same connection."""
    with anyio.fail_after(90):
        async with connected(transport) as client:
            for check in CHECKS:
                await check(client)

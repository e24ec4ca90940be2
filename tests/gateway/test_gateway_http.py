"""The gateway's streamable HTTP front, and streamable HTTP backends."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from gateway_harness import (
    RECORDER,
    calls,
    everything_http,
    free_port,
    local_client,
    local_front_client,
    local_http_gateway,
    recorder,
    running,
    text_of,
    within,
)
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

pytestmark = pytest.mark.e2e

LIMIT = 40


@asynccontextmanager
async def http_client(url: str, token: str | None = None, **options: Any) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy", **options) as client,
    ):
        yield client


async def test_http_front_blocks_redacts_filters(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    seen: list[float] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append(value)

    async def sample(context: Any, params: Any) -> types.CreateMessageResult:
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="ok"), model="m"
        )

    async with (
        local_http_gateway("--backend", recorder(log)) as url,
        within(LIMIT),
        http_client(url, sampling_callback=sample) as client,
    ):
        assert client.server_info is not None and client.server_info.name == "recorder"
        with pytest.raises(MCPError) as caught:
            await client.call_tool("shell_exec", {"command": "ls"})
        assert caught.value.code == -32602
        text = text_of(await client.call_tool("lookup_user", {"user": "jane"}))
        assert "jane.doe@example.com" not in text
        names = {t.name for t in (await client.list_tools()).tools}
        assert "internal_debug" not in names
        result = await client.call_tool("slow", {"steps": 2}, progress_callback=progress)
        assert text_of(result) == "done"
        assert seen == [1, 2]
        assert text_of(await client.call_tool("summarize", {"text": "x"})) == "model said: ok"
    assert [c["tool"] for c in calls(log)] == ["lookup_user", "slow", "summarize"]


async def test_http_front_requires_the_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GW_TEST_TOKEN", "s3cret-token")
    async with (
        local_http_gateway(
            "--backend", recorder(tmp_path / "calls.log"), "--auth-token-env", "GW_TEST_TOKEN"
        ) as url,
        within(LIMIT),
    ):
        async with httpx2.AsyncClient() as raw:
            refused = await raw.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
            assert refused.status_code == 401
        async with http_client(url, token="s3cret-token") as client:
            assert text_of(await client.call_tool("echo", {"text": "in"})) == "in"


async def test_http_backend() -> None:
    with everything_http() as backend, anyio.fail_after(LIMIT):
        async with local_client("--backend", f"ev={backend}") as client:
            assert client.server_info is not None
            assert "everything" in client.server_info.name
            assert text_of(await client.call_tool("echo", {"message": "hi"})) == "Echo: hi"
            with pytest.raises(MCPError):
                await client.call_tool("get-env", {})


async def test_2026_sessions_reach_an_http_backend(tmp_path: Path) -> None:
    """Both ends over HTTP: the gateway stamps the routing headers a 2026-07-28 request
    needs (its version, method and name) on what it forwards."""
    log = tmp_path / "calls.log"
    port = free_port()
    asked: list[str] = []

    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"answer": "blue"})

    argv = [sys.executable, str(RECORDER), str(log), str(port)]
    with running(argv, port) as backend, anyio.fail_after(LIMIT):
        async with local_front_client(
            "http", "--backend", f"rec={backend}", mode="auto", elicitation_callback=elicit
        ) as client:
            assert client.protocol_version == "2026-07-28"
            assert text_of(await client.call_tool("echo", {"text": "far"})) == "far"
            answer = text_of(await client.call_tool("ask", {"question": "colour?"}))
            assert "state=ask-1" in answer and "blue" in answer
            with pytest.raises(MCPError) as caught:
                await client.call_tool("ask", {"question": "your password?"})
            assert caught.value.code == -32602
    assert asked == ["colour?"]
    assert [c["tool"] for c in calls(log)] == ["echo", "ask", "ask", "ask"]


async def test_http_front_serves_both_eras(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    accept = {"Accept": "application/json, text/event-stream"}
    async with (
        local_http_gateway("--backend", recorder(log)) as url,
        within(LIMIT),
        httpx2.AsyncClient() as raw,
    ):
        # A 2025 request that is not `initialize` opens no session (and starts no backend).
        stray = await raw.post(
            url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=accept
        )
        assert stray.status_code == 400
        assert stray.json()["error"]["code"] == -32600
        # A version the gateway does not speak is told which it does, as the SDK does.
        future = await raw.post(
            url,
            json={"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
            headers={**accept, "MCP-Protocol-Version": "2099-01-01"},
        )
        assert future.status_code == 400
        assert future.json()["error"]["code"] == -32602  # no envelope: the first rung
        # An input response to no input request the gateway sealed is refused, not passed.
        envelope = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        retried = {
            "name": "ask",
            "arguments": {"question": "colour?"},
            "inputResponses": {"q": {"answer": "blue"}},
            "requestState": "ask-1",
            "_meta": envelope,
        }
        odd = await raw.post(
            url,
            json={"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": retried},
            headers={
                **accept,
                "MCP-Protocol-Version": "2026-07-28",
                "Mcp-Method": "tools/call",
                "Mcp-Name": "ask",
            },
        )
        assert odd.json()["error"]["code"] == -32602
        assert "answers no input request" in odd.text
        # An SDK client in auto mode speaks 2026-07-28, one sessionless POST per request.
        async with (
            httpx2.AsyncClient(timeout=30) as http,
            Client(streamable_http_client(url, http_client=http), mode="auto") as client,
        ):
            assert client.protocol_version == "2026-07-28"
            assert text_of(await client.call_tool("echo", {"text": "auto"})) == "auto"
            with pytest.raises(MCPError) as caught:
                await client.call_tool("shell_exec", {"command": "ls"})
            assert caught.value.code == -32602
            # Hidden before it was ever listed: the gateway lists through the chain first.
            with pytest.raises(MCPError) as hidden:
                await client.call_tool("internal_debug", {})
            assert "hidden by policy" in str(hidden.value.data)
            names = {t.name for t in (await client.list_tools()).tools}
            assert "internal_debug" not in names and "echo" in names
        async with http_client(url) as client:
            assert client.protocol_version == "2025-11-25"
            assert text_of(await client.call_tool("echo", {"text": "legacy"})) == "legacy"
    assert [c["tool"] for c in calls(log)] == ["echo", "echo"]

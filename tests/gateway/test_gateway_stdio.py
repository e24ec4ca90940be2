"""The gateway over stdio in front of a real SDK backend, driven by the real Python SDK client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from gateway_harness import calls, gateway_client, raw_request, recorder, text_of
from mcp.shared.exceptions import MCPError

pytestmark = pytest.mark.e2e

LIMIT = 30
EXTENSION = "io.modelcontextprotocol/interceptors"


async def test_transparent_handshake(tmp_path: Path) -> None:
    with anyio.fail_after(LIMIT):
        async with gateway_client("--backend", recorder(tmp_path / "calls.log")) as client:
            assert client.server_info is not None
            assert client.server_info.name == "recorder"
            assert client.instructions == "recorder records its calls"
            assert client.protocol_version == "2025-11-25"
            assert client.server_capabilities.tools is not None
            assert "io.modelcontextprotocol/interceptors" not in (
                client.server_capabilities.experimental or {}
            )


async def test_blocked_call_never_reaches_the_backend(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    with anyio.fail_after(LIMIT):
        async with gateway_client("--backend", recorder(log)) as client:
            with pytest.raises(MCPError) as caught:
                await client.call_tool("shell_exec", {"command": "rm -rf /"})
            assert caught.value.code == -32602
            assert caught.value.message == "Interceptor validation failed"
            errors = caught.value.data["validationErrors"]
            assert errors[0]["interceptor"] == "tool-guard"
            assert "rm -rf" not in str(caught.value.data)
            assert text_of(await client.call_tool("echo", {"text": "hi"})) == "hi"
    assert [c["tool"] for c in calls(log)] == ["echo"]


async def test_block_as_is_error_result(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    with anyio.fail_after(LIMIT):
        async with gateway_client("--backend", recorder(log), "--block-style", "result") as client:
            result = await client.call_tool("shell_exec", {"command": "ls"})
            assert result.is_error
            assert text_of(result) == "Blocked by policy: tool is blocked by policy"
    assert calls(log) == []


async def test_result_is_redacted(tmp_path: Path) -> None:
    with anyio.fail_after(LIMIT):
        async with gateway_client("--backend", recorder(tmp_path / "calls.log")) as client:
            text = text_of(await client.call_tool("lookup_user", {"user": "jane"}))
    assert "jane.doe@example.com" not in text
    assert "[EMAIL]" in text or "[REDACTED" in text


async def test_filtered_list_and_hidden_tool_refused(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    with anyio.fail_after(LIMIT):
        async with gateway_client("--backend", recorder(log)) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert "echo" in names
            assert "internal_debug" not in names
            with pytest.raises(MCPError) as caught:
                await client.call_tool("internal_debug", {})
            assert caught.value.code == -32602
            assert caught.value.data["validationErrors"][0]["interceptor"] == "hide-internal"
    assert calls(log) == []


async def test_backend_errors_pass_through(tmp_path: Path) -> None:
    with anyio.fail_after(LIMIT):
        async with gateway_client("--backend", recorder(tmp_path / "calls.log")) as client:
            with pytest.raises(MCPError) as caught:
                await client.read_resource("nothing://here")
    assert caught.value.code != -32603 or "Backend" not in caught.value.message


async def test_notifications_reach_the_client(tmp_path: Path) -> None:
    logged: list[Any] = []
    seen: list[Any] = []

    async def on_log(params: Any) -> None:
        logged.append(params.data)

    async def on_message(message: Any) -> None:
        seen.append(type(message).__name__)

    with anyio.fail_after(LIMIT):
        async with gateway_client(
            "--backend",
            recorder(tmp_path / "calls.log"),
            logging_callback=on_log,
            message_handler=on_message,
            log_level="debug",
        ) as client:
            assert text_of(await client.call_tool("announce", {})) == "announced"
            for _ in range(50):
                if logged and len(seen) >= 3:
                    break
                await anyio.sleep(0.05)
    assert logged == ["hello from the backend"]
    assert {"ToolListChangedNotification", "ResourceUpdatedNotification"} <= set(seen), seen


async def test_expose_interceptors(tmp_path: Path) -> None:
    with anyio.fail_after(LIMIT):
        async with gateway_client(
            "--backend", recorder(tmp_path / "calls.log"), "--expose-interceptors"
        ) as client:
            advertised = (client.server_capabilities.experimental or {})[EXTENSION]
            assert "tools/call" in advertised["supportedEvents"]
            listed = await raw_request(client, "interceptors/list", {})
            names = [d["name"] for d in listed["interceptors"]]
            assert {"tool-guard", "pii-redactor", "hide-internal"} <= set(names)
            verdict = await raw_request(
                client,
                "interceptor/invoke",
                {
                    "name": "tool-guard",
                    "event": "tools/call",
                    "phase": "request",
                    "payload": {"name": "shell_exec", "arguments": {}},
                },
            )
            assert verdict["valid"] is False


async def test_side_server_runs_the_receiving_order(tmp_path: Path) -> None:
    decisions = tmp_path / "decisions.log"
    with anyio.fail_after(LIMIT):
        async with gateway_client(
            "--backend",
            recorder(tmp_path / "calls.log"),
            "--side",
            "server",
            "--decision-log",
            str(decisions),
        ) as client:
            await client.call_tool("echo", {"text": "hi"})
    runs = [json.loads(line) for line in decisions.read_text().splitlines()]
    sides = {(r["event"], r["phase"]): r["side"] for r in runs}
    assert sides[("tools/call", "request")] == "receiving"
    assert sides[("tools/call", "response")] == "sending"

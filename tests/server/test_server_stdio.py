"""The SDK client over stdio, on both handshake eras, against a real server process."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from server_harness import capability, invoke, list_interceptors, raw_request, stdio_client

pytestmark = pytest.mark.e2e

EXPECTED_EVENTS = ["tools/call", "prompts/*", "*"]
EXTENSION = "io.modelcontextprotocol/interceptors"
ALLOW_CALL = {"name": "allow-all", "event": "tools/call", "phase": "request", "payload": {}}


async def _error(coro: Any) -> Any:
    with pytest.raises(MCPError) as caught:
        await coro
    return caught.value.error


async def check_capability_and_listing(client: Client) -> None:
    caps = capability(client)
    assert caps["extensions"][EXTENSION] == {"supportedEvents": EXPECTED_EVENTS}
    assert caps["experimental"][EXTENSION] == {"supportedEvents": EXPECTED_EVENTS}
    names = [d["name"] for d in await list_interceptors(client)]
    assert names[:3] == ["allow-all", "deny-all", "uppercase-note"]
    prompts = [d["name"] for d in await list_interceptors(client, "prompts/get")]
    assert prompts == ["prompt-guard", "everything"]
    tools = [d["name"] for d in await list_interceptors(client, "tools/call")]
    assert "prompt-guard" not in tools
    assert tools[-1] == "everything"
    assert await list_interceptors(client, "resources/read") == [
        d for d in await list_interceptors(client) if d["name"] == "everything"
    ]


@pytest.mark.parametrize(
    ("mode", "route"),
    [("auto", "fast-lane"), ("legacy", "sdk-only")],
    ids=["2026-era-fast-lane", "2025-handshake-sdk-only"],
)
async def test_stdio_end_to_end(mode: str, route: str) -> None:
    """Capability on the handshake, listing, every invoke outcome and error code.

    The 2026 era through the fast lane and the 2025 handshake through the SDK
    alone; the raw-pipe and TypeScript tests cover the lane on the 2025 era.
    """
    args = ("--no-fast-path",) if route == "sdk-only" else ()
    with anyio.fail_after(30):
        async with stdio_client(*args, mode=mode) as client:
            expected_version = "2025-11-25" if mode == "legacy" else "2026-07-28"
            assert client.protocol_version == expected_version
            await check_capability_and_listing(client)
            raw = await raw_request(client, "interceptor/invoke", ALLOW_CALL)
            if mode == "auto":
                assert raw["resultType"] == "complete"
                assert raw["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "policyc"
            else:
                assert "resultType" not in raw
            await check_invokes_and_errors(client)


async def check_invokes_and_errors(client: Client) -> None:
    assert await invoke(client, name="allow-all") == {
        "interceptor": "allow-all",
        "type": "validation",
        "phase": "request",
        "valid": True,
    }
    denied = await invoke(client, name="deny-all", phase="response")
    assert denied["valid"] is False
    assert denied["messages"] == [{"message": "denied by policy", "severity": "error"}]
    mutated = await invoke(client, name="uppercase-note")
    assert mutated["modified"] is True
    assert mutated["payload"] == {"name": "echo", "arguments": {"note": "HELLO"}}

    unknown = await _error(invoke(client, name="missing"))
    assert unknown.code == -32602
    assert unknown.data["interceptor"] == "missing"
    assert unknown.data["reason"] == "unknown interceptor"

    wrong_event = await _error(invoke(client, name="prompt-guard"))
    assert wrong_event.code == -32602
    assert wrong_event.data == {
        "reason": "event not hooked",
        "interceptor": "prompt-guard",
        "event": "tools/call",
        "phase": "request",
    }
    wrong_phase = await _error(invoke(client, name="everything", phase="request"))
    assert wrong_phase.code == -32602
    assert wrong_phase.data["phase"] == "request"

    bad = await _error(invoke(client, name="allow-all", phase="sideways", timeoutMs="5"))
    assert bad.code == -32602
    assert bad.data["fields"] == ["phase", "timeoutMs"]

    missing = await _error(
        invoke(client, name="allow-all", payload={"secret": "hunter2"}, event="")
    )
    assert missing.code == -32602
    assert "event" in missing.data["fields"]
    assert "hunter2" not in repr(missing)

    crashed = await _error(invoke(client, name="crash"))
    assert crashed.code == -32603
    assert crashed.data == {
        "interceptor": "crash",
        "reason": "RuntimeError",
    }

    late = await _error(invoke(client, name="slow", timeoutMs=50))
    assert late.code == -32000
    assert late.data == {
        "interceptor": "slow",
        "timeoutMs": 50,
        "phase": "request",
        "reason": "timeout",
    }

    relayed = await _error(invoke(client, name="sep-error"))
    assert (relayed.code, relayed.data) == (-32602, {"validationErrors": []})

    # The connection is still healthy after every failure.
    assert (await invoke(client, name="allow-all"))["valid"] is True


async def test_a_blocked_invoke_does_not_hold_up_the_others() -> None:
    with anyio.fail_after(30):
        async with stdio_client() as client:
            answers: list[dict[str, Any]] = []

            async def blocked() -> None:
                answers.append(await invoke(client, name="gate"))

            async with anyio.create_task_group() as tg:
                tg.start_soon(blocked)
                for _ in range(20):
                    assert (await invoke(client, name="allow-all"))["valid"] is True
                assert answers == []
                await invoke(client, name="release")
            assert answers[0]["interceptor"] == "gate"

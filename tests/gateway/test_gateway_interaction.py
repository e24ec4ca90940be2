"""Traffic beyond one request and its answer: progress, cancellation, and what the backend
asks of the client (sampling, elicitation) on a 2025-11-25 and a 2026-07-28 session, the
latter over stdio and over the streamable HTTP front."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from gateway_harness import (
    calls,
    cancel_a_slow_call,
    local_client,
    local_front_client,
    recorder,
    text_of,
)
from mcp.shared.exceptions import MCPError

pytestmark = pytest.mark.e2e

LIMIT = 30
SESSIONS = [
    pytest.param("stdio", "legacy", "2025-11-25", id="stdio-2025-11-25"),
    pytest.param("stdio", "auto", "2026-07-28", id="stdio-2026-07-28"),
    pytest.param("http", "auto", "2026-07-28", id="http-2026-07-28"),
]


async def test_progress_is_forwarded(tmp_path: Path) -> None:
    seen: list[float] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append(value)

    with anyio.fail_after(LIMIT):
        async with local_client("--backend", recorder(tmp_path / "calls.log")) as client:
            result = await client.call_tool("slow", {"steps": 3}, progress_callback=progress)
    assert text_of(result) == "done"
    assert seen == [1, 2, 3]


async def test_cancelled_call_is_cancelled_on_the_backend(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    with anyio.fail_after(LIMIT):
        async with local_client("--backend", recorder(log)) as client:
            await cancel_a_slow_call(client)
            # The session still works, and the backend saw the cancellation.
            assert text_of(await client.call_tool("echo", {"text": "after"})) == "after"
            for _ in range(50):
                if "slow-cancelled" in [c["tool"] for c in calls(log)]:
                    break
                await anyio.sleep(0.1)
    assert "slow-cancelled" in [c["tool"] for c in calls(log)]


def _elicit(answer: str, asked: list[str]) -> Any:
    async def callback(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"answer": answer})

    return callback


def _sample(reply: str, asked: list[str]) -> Any:
    async def callback(context: Any, params: Any) -> types.CreateMessageResult:
        asked.append(params.messages[0].content.text)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=reply),
            model="test-model",
        )

    return callback


@pytest.mark.parametrize(("front", "mode", "version"), SESSIONS)
async def test_elicitation_passes_and_is_checked(
    tmp_path: Path, front: str, mode: str, version: str
) -> None:
    asked: list[str] = []
    with anyio.fail_after(LIMIT):
        async with local_front_client(
            front,
            "--backend",
            recorder(tmp_path / "calls.log"),
            mode=mode,
            elicitation_callback=_elicit("blue", asked),
        ) as client:
            assert client.protocol_version == version
            result = await client.call_tool("ask", {"question": "favourite colour?"})
            assert "blue" in text_of(result)
            assert asked == ["favourite colour?"]
            # A request the policy forbids never reaches the user.
            with pytest.raises(MCPError) as caught:
                await client.call_tool("ask", {"question": "your password?"})
            assert caught.value.data["validationErrors"][0]["interceptor"] == "no-password-prompts"
            assert asked == ["favourite colour?"]


@pytest.mark.parametrize(("front", "mode", "version"), SESSIONS)
async def test_elicitation_answer_is_checked(
    tmp_path: Path, front: str, mode: str, version: str
) -> None:
    asked: list[str] = []
    with anyio.fail_after(LIMIT):
        async with local_front_client(
            front,
            "--backend",
            recorder(tmp_path / "calls.log"),
            mode=mode,
            elicitation_callback=_elicit("hunter2", asked),
        ) as client:
            assert client.protocol_version == version
            with pytest.raises(MCPError) as caught:
                await client.call_tool("ask", {"question": "favourite colour?"})
    # On 2025 the backend's elicitation fails and it reports the gateway's error; on
    # 2026 the retried call is refused before it reaches the backend. Either way
    # the client hears which policy stopped it, and never the answer itself.
    assert caught.value.code == -32602
    assert caught.value.data["validationErrors"][0]["interceptor"] == "no-leaked-answers"
    assert "hunter2" not in str(caught.value.data)


@pytest.mark.parametrize(("front", "mode", "version"), SESSIONS)
async def test_sampling_is_checked_both_ways(
    tmp_path: Path, front: str, mode: str, version: str
) -> None:
    asked: list[str] = []
    with anyio.fail_after(LIMIT):
        async with local_front_client(
            front,
            "--backend",
            recorder(tmp_path / "calls.log"),
            mode=mode,
            sampling_callback=_sample("write to bob@example.com", asked),
        ) as client:
            assert client.protocol_version == version
            result = await client.call_tool("summarize", {"text": "the weather"})
            assert "bob@example.com" not in text_of(result)
            assert text_of(result).startswith("model said:")
            with pytest.raises(MCPError):
                await client.call_tool("summarize", {"text": "exfiltrate the keys"})
    assert asked == ["the weather"]


@pytest.mark.parametrize("front", ["stdio", "http"])
async def test_two_backends_federated_on_a_2026_session(tmp_path: Path, front: str) -> None:
    """The merged lists carry what 2026-07-28 requires of a list (resultType, cacheScope,
    ttlMs), and a prefixed name reaches its owner."""
    a, b = tmp_path / "a.log", tmp_path / "b.log"
    backends = ["--backend", recorder(a, "a"), "--backend", recorder(b, "b")]
    with anyio.fail_after(LIMIT):
        async with local_front_client(front, *backends, mode="auto") as client:
            assert client.protocol_version == "2026-07-28"
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"a__echo", "b__echo"} <= names
            assert not any(name.endswith("internal_debug") for name in names)
            assert text_of(await client.call_tool("b__echo", {"text": "to b"})) == "to b"
    assert [c["tool"] for c in calls(b)] == ["echo"] and calls(a) == []

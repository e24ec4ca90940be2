"""A 2026-07-28 client through the gateway, in front of backends of either era."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from gateway_harness import everything, local_front_client, recorder, text_of

pytestmark = pytest.mark.e2e

LIMIT = 60


@pytest.mark.parametrize("front", ["stdio", "http"])
async def test_a_2026_client_is_served_by_2025_era_servers(front: str) -> None:
    """The npm reference server answers in 2025 shapes; the SDK client of 2026-07-28
    rejects a result without resultType, and a list without its cache fields."""
    with anyio.fail_after(LIMIT):
        async with local_front_client(
            front, "--backend", everything(), policies=[], mode="2026-07-28"
        ) as client:
            tools = await client.list_tools()
            assert "echo" in {tool.name for tool in tools.tools}
            assert tools.cache_scope == "private" and tools.ttl_ms == 0
            result = await client.call_tool("echo", {"message": "across eras"})
            assert text_of(result) == "Echo: across eras"
            assert result.result_type == "complete"


async def test_a_listen_stream_is_acknowledged_over_stdio(tmp_path: Path) -> None:
    """The backend acknowledges under the gateway's id for the request; the client must
    see its own, or it waits for the acknowledgement forever."""
    with anyio.fail_after(LIMIT):
        async with (
            local_front_client(
                "stdio",
                "--backend",
                recorder(tmp_path / "calls.log"),
                policies=[],
                mode="2026-07-28",
            ) as client,
            client.listen(tools_list_changed=True) as subscription,
        ):
            assert subscription.honored.tools_list_changed is True


async def test_a_2026_request_that_opted_in_gets_its_log_messages_over_http(
    tmp_path: Path,
) -> None:
    """Over HTTP a 2026-07-28 request has no session stream: the backend's log message
    must ride on that request's own response, or it is lost."""
    logged: list[Any] = []

    async def on_log(params: Any) -> None:
        logged.append(params.data)

    with anyio.fail_after(LIMIT):
        async with local_front_client(
            "http",
            "--backend",
            recorder(tmp_path / "calls.log"),
            policies=[],
            mode="2026-07-28",
            log_level="info",
            logging_callback=on_log,
        ) as client:
            assert text_of(await client.call_tool("announce", {})) == "announced"
    assert logged == ["hello from the backend"]


async def test_a_listen_stream_outlives_the_backend_timeout(tmp_path: Path) -> None:
    """A listen request is answered only when the stream ends: the per-request backend
    timeout must not end it (the client would see the subscription lost)."""
    backend = recorder(tmp_path / "calls.log")
    with anyio.fail_after(LIMIT):
        async with (
            local_front_client(
                "stdio",
                "--backend",
                backend,
                "--backend-timeout",
                "1",
                policies=[],
                mode="2026-07-28",
            ) as client,
            client.listen(tools_list_changed=True) as subscription,
        ):
            with anyio.move_on_after(3) as waited:
                await subscription.__anext__()
            assert waited.cancelled_caught  # still open, with nothing to say
            assert text_of(await client.call_tool("echo", {"text": "still"})) == "still"

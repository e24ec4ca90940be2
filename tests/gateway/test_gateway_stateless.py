"""`policyc gateway --stateless`: replicas behind a round-robin balancer, each request
answered by whichever replica gets it, and what needs a session refused in words."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from balancer import FLOW_KEY, balanced_client, replicas
from gateway_harness import (
    RECORDER,
    calls,
    cancel_a_slow_call,
    free_port,
    policyc_gateway,
    raw_request,
    recorder,
    running,
    text_of,
)
from mcp.shared.exceptions import MCPError

# The tests that start gateway replicas or redis carry the e2e mark.

LIMIT = 60


@pytest.mark.e2e
async def test_replicas_block_redact_and_filter(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    seen: list[float] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append(value)

    with replicas(2, "--backend", recorder(log)) as ports, anyio.fail_after(LIMIT):
        async with balanced_client(ports) as (client, balancer):
            assert client.server_info is not None and client.server_info.name == "recorder"
            # Hidden before this session listed anything, on whichever replica it lands.
            with pytest.raises(MCPError) as hidden:
                await client.call_tool("internal_debug", {})
            assert "hidden by policy" in str(hidden.value.data)
            with pytest.raises(MCPError) as blocked:
                await client.call_tool("shell_exec", {"command": "rm -rf /"})
            assert blocked.value.code == -32602
            text = text_of(await client.call_tool("lookup_user", {"user": "jane"}))
            assert "jane.doe@example.com" not in text and "jane" in text
            names = {t.name for t in (await client.list_tools()).tools}
            assert "internal_debug" not in names and "echo" in names
            result = await client.call_tool("slow", {"steps": 2}, progress_callback=progress)
            assert text_of(result) == "done" and seen == [1, 2]
        served = balancer.served
    methods = [method for _, method, _ in served]
    assert methods.index("tools/call") < methods.index("tools/list")
    assert {port for port, method, _ in served if method == "tools/call"} == set(ports)
    # Neither the hidden nor the blocked call reached the backend.
    assert [c["tool"] for c in calls(log)] == ["lookup_user", "slow"]


@pytest.mark.e2e
async def test_2026_input_responses_are_checked_on_another_replica(tmp_path: Path) -> None:
    """The retried request lands on the replica that did not see the input request: the
    sealed input-request name tells it which event the answer runs under. Both replicas
    front one HTTP backend, as in production: the backend seals its own requestState."""
    log = tmp_path / "calls.log"
    answers = iter(["blue", "hunter2"])

    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"answer": next(answers)})

    port = free_port()
    backend_argv = [sys.executable, str(RECORDER), str(log), str(port)]
    with (
        running(backend_argv, port) as backend,
        replicas(2, "--backend", f"rec={backend}") as ports,
        anyio.fail_after(LIMIT),
    ):
        async with balanced_client(ports, mode="auto", elicitation_callback=elicit) as (
            client,
            balancer,
        ):
            assert client.protocol_version == "2026-07-28"
            answer = text_of(await client.call_tool("ask", {"question": "colour?"}))
            assert "blue" in answer and "state=ask-1" in answer
            with pytest.raises(MCPError) as leaked:
                await client.call_tool("ask", {"question": "colour again?"})
            assert leaked.value.data["validationErrors"][0]["interceptor"] == "no-leaked-answers"
    first, retried = balancer.port_of("ask")[:2]
    assert first != retried
    # The leaking answer never reached the backend: it saw three asks, not four.
    assert [c["tool"] for c in calls(log)] == ["ask", "ask", "ask"]


@pytest.mark.e2e
async def test_a_cancelled_call_is_cancelled_on_the_backend(tmp_path: Path) -> None:
    """On the replica that serves the call, `notifications/cancelled` reaches the backend
    and ends the call's POST (it is owed no answer)."""
    log = tmp_path / "calls.log"
    with replicas(1, "--backend", recorder(log)) as ports, anyio.fail_after(LIMIT):
        async with balanced_client(ports) as (client, _):
            await cancel_a_slow_call(client)
            assert text_of(await client.call_tool("echo", {"text": "after"})) == "after"
            while "slow-cancelled" not in [c["tool"] for c in calls(log)]:
                await anyio.sleep(0.1)


@pytest.mark.e2e
async def test_what_needs_a_session_is_refused(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    asked: list[str] = []

    async def sample(context: Any, params: Any) -> types.CreateMessageResult:
        asked.append("sampling")
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="ok"), model="m"
        )

    with replicas(1, "--backend", recorder(log)) as ports, anyio.fail_after(LIMIT):
        async with balanced_client(ports, sampling_callback=sample) as (client, _):
            # The backend's sampling request has no stream to the client: the backend hears why.
            with pytest.raises(MCPError) as sampling:
                await client.call_tool("summarize", {"text": "the weather"})
            assert sampling.value.code == -32600
            assert "--stateless" in sampling.value.data["reason"]
            with pytest.raises(MCPError) as subscribe:
                await raw_request(client, "resources/subscribe", {"uri": "memo://one"})
            assert "needs a session stream" in str(subscribe.value.data)
            assert text_of(await client.call_tool("echo", {"text": "still here"})) == "still here"
        url = f"http://127.0.0.1:{ports[0]}/mcp"
        accept = {"Accept": "application/json, text/event-stream"}
        listing = {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}
        async with httpx2.AsyncClient(timeout=30) as raw:
            missing = await raw.post(url, json=listing, headers=accept)
            assert missing.status_code == 400
            forged = await raw.post(
                url, json=listing, headers={**accept, "Mcp-Session-Id": "0" * 32 + ".x"}
            )
            assert forged.status_code == 404
            stream = await raw.get(url, headers={"Accept": "text/event-stream"})
            assert stream.status_code == 405
    assert asked == []
    assert "summarize" in [c["tool"] for c in calls(log)]


FLOW_POLICY = """\
validator guard {
  on tools/call request
  on tools/call response
  deny flow AWS_ACCESS_KEY across servers
}
"""


@pytest.mark.parametrize(
    ("extra", "env", "says"),
    [
        pytest.param([], {}, "--stateless needs --flow-key-env", id="no-key"),
        pytest.param(
            ["--config", "[flow]\nkey_env = 'FLOW_KEY'\n"],
            {"FLOW_KEY": FLOW_KEY},
            "--stateless with flow rules needs --flow-store",
            id="key-from-the-config-file",
        ),
        pytest.param(
            ["--flow-key-env", "FLOW_KEY"],
            {"FLOW_KEY": FLOW_KEY},
            "--stateless with flow rules needs --flow-store",
            id="flow-rules-in-memory",
        ),
    ],
)
def test_stateless_refuses_what_cannot_work(
    tmp_path: Path, extra: list[str], env: dict[str, str], says: str
) -> None:
    policy = tmp_path / "flow.policy"
    policy.write_text(FLOW_POLICY)
    if extra[:1] == ["--config"]:
        config = tmp_path / "gateway.toml"
        config.write_text(extra[1])
        extra = ["--config", str(config)]
    done = policyc_gateway(
        "--http",
        "127.0.0.1:0",
        "--stateless",
        "--backend",
        recorder(tmp_path / "c"),
        *extra,
        policies=[policy],
        env=env,
    )
    assert done.exit_code == 2
    assert says in done.stderr
    assert "Traceback" not in done.stderr

"""What the server asks of a wrapped client: the 2026-07-28 ``inputRequests`` rounds and the
2025-era requests, against the recording backend (an MCPServer) over stdio and streamable HTTP.

The backend's ``interview`` tool asks the model (sampling), the user (elicitation)
and the roots at once, and records the answers exactly as they arrived, so what
policy did to them is read from the backend's own log.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from gateway_harness import RECORDER, calls, free_port, running, text_of
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from policy_engine.compiler import compile_policies
from policy_engine.integrations import PolicyBlocked, PolicyClient
from policy_engine.interception import ChainRun

pytestmark = pytest.mark.e2e

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
POLICIES = compile_policies(
    [HERE / "policies" / "integ_test.policy", ROOT / "policies" / "secrets.policy"]
)
TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2
LIMIT = 60
SESSIONS = [
    pytest.param("legacy", "2025-11-25", "stdio", id="2025-11-25-stdio"),
    pytest.param("auto", "2026-07-28", "stdio", id="2026-07-28-stdio"),
    pytest.param("auto", "2026-07-28", "http", id="2026-07-28-http"),
]
MODERN = [param for param in SESSIONS if "2026" in str(param.id)]


class Application:
    """The application's own callbacks; ``asked`` is what each of them was shown."""

    def __init__(self, answer: str = "lovely") -> None:
        self.answer = answer
        self.asked: list[str] = []

    async def sample(self, context: Any, params: Any) -> types.CreateMessageResult:
        self.asked.append(f"model: {params.messages[0].content.text}")
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="it is tea"), model="m"
        )

    async def elicit(self, context: Any, params: Any) -> types.ElicitResult:
        self.asked.append(f"user: {params.message}")
        return types.ElicitResult(action="accept", content={"answer": self.answer})

    async def roots(self, context: Any) -> types.ListRootsResult:
        self.asked.append("roots")
        return types.ListRootsResult(
            roots=[
                types.Root(uri="file:///work/project", name="project"),
                types.Root(uri="file:///home/me/.ssh", name="keys"),
            ]
        )


@asynccontextmanager
async def wrapped(
    mode: str, transport: str, log: Path, app: Application, observer: Callable[[ChainRun], None]
) -> AsyncIterator[PolicyClient]:
    policies = PolicyClient(POLICIES, session_id="s-1", observer=observer)
    callbacks: dict[str, Any] = {
        "sampling_callback": policies.sampling(app.sample),
        "elicitation_callback": policies.elicitation(app.elicit),
        "list_roots_callback": policies.roots(app.roots),
    }
    if transport == "stdio":
        params = StdioServerParameters(
            command=sys.executable, args=[str(RECORDER), str(log)], env=dict(os.environ)
        )
        async with Client(stdio_client(params), mode=mode, **callbacks) as raw:
            yield policies.bind(raw)
        return
    port = free_port()
    with running([sys.executable, str(RECORDER), str(log), str(port)], port) as url:
        async with Client(url, mode=mode, **callbacks) as raw:
            yield policies.bind(raw)


def refused_by(error: BaseException, version: str) -> str:
    """The policy that refused: raised in the client on 2026-07-28; on 2025 the backend
    got the SEP error as the answer to its request and reports it."""
    if version == "2026-07-28":
        assert isinstance(error, PolicyBlocked)
        assert error.run is not None and error.run.aborted_at is not None
        return error.run.aborted_at.interceptor
    assert isinstance(error, MCPError) and error.code == -32602
    interceptor: str = error.data["validationErrors"][0]["interceptor"]
    return interceptor


def answers(log: Path) -> list[dict[str, Any]]:
    return [call for call in calls(log) if call["tool"] == "interview-answers"]


@pytest.mark.parametrize(("mode", "version", "transport"), SESSIONS)
async def test_a_clean_round_trip(tmp_path: Path, mode: str, version: str, transport: str) -> None:
    log, app, runs = tmp_path / "calls.log", Application(), list[ChainRun]()
    with anyio.fail_after(LIMIT):
        async with wrapped(mode, transport, log, app, runs.append) as client:
            assert client.client.protocol_version == version
            result = await client.call_tool("interview", {"topic": "tea"})
    assert text_of(result) == "thanks for 3 answers"
    assert sorted(app.asked) == [
        "model: tell me about tea",
        "roots",
        "user: what do you think of tea?",
    ]
    [got] = answers(log)
    assert got["arguments"]["answers"]["model"]["content"]["text"] == "it is tea"
    # The policy hid one root before the backend saw the answer.
    assert got["arguments"]["answers"]["roots"]["roots"] == [
        {"uri": "file:///work/project", "name": "project"}
    ]
    # Each input request and each answer ran the chain once, under its own event.
    # (tools/list ran once too: the filtered list is learned before the first call.)
    inputs = [run for run in runs if run.event not in ("tools/call", "tools/list")]
    asked = {(run.event, run.phase) for run in inputs}
    events = ("sampling/createMessage", "elicitation/create", "roots/list")
    assert asked == {(event, phase) for event in events for phase in ("request", "response")}
    assert len(inputs) == 6
    assert [run.event for run in runs].count("tools/list") == 1
    if version == "2026-07-28":
        # requestState is sealed by the backend's SDK: an altered one would not open.
        assert got["arguments"]["state"] == "interview:tea"


@pytest.mark.parametrize(("mode", "version", "transport"), SESSIONS)
async def test_a_blocked_sampling_request_never_reaches_the_application(
    tmp_path: Path, mode: str, version: str, transport: str
) -> None:
    log, app = tmp_path / "calls.log", Application()
    with anyio.fail_after(LIMIT):
        async with wrapped(mode, transport, log, app, lambda run: None) as client:
            with pytest.raises(Exception) as caught:
                await client.call_tool("interview", {"topic": "how to exfiltrate the keys"})
    assert refused_by(caught.value, version) == "integ-no-exfiltration"
    # Not even the user or the roots were asked: on 2026 the whole round is checked
    # before any callback runs (on 2025 the backend asks the model first, and stops).
    assert app.asked == []
    assert answers(log) == []


@pytest.mark.parametrize(("mode", "version", "transport"), SESSIONS)
async def test_a_secret_in_the_users_answer_is_redacted_before_the_backend_sees_it(
    tmp_path: Path, mode: str, version: str, transport: str
) -> None:
    log, app = tmp_path / "calls.log", Application(answer=f"my token is {TOKEN}")
    with anyio.fail_after(LIMIT):
        async with wrapped(mode, transport, log, app, lambda run: None) as client:
            result = await client.call_tool("interview", {"topic": "tea"})
    assert text_of(result) == "thanks for 3 answers"
    [got] = answers(log)
    user = got["arguments"]["answers"]["user"]
    answer = user["content" if version == "2026-07-28" else "data"]["answer"]
    assert answer == "my token is [SECRET:GITHUB_TOKEN]"
    assert TOKEN not in log.read_text()


@pytest.mark.parametrize(("mode", "version", "transport"), MODERN)
async def test_a_resumed_exchange_is_checked_and_its_state_passes_untouched(
    tmp_path: Path, mode: str, version: str, transport: str
) -> None:
    log, app, runs = tmp_path / "calls.log", Application(), list[ChainRun]()
    with anyio.fail_after(LIMIT):
        async with wrapped(mode, transport, log, app, runs.append) as client:
            # The application drives the round itself, e.g. after persisting the state.
            interim = await client.client.session.call_tool(
                "interview", {"topic": "tea"}, allow_input_required=True
            )
            assert isinstance(interim, types.InputRequiredResult)
            assert interim.request_state is not None
            responses: types.InputResponses = {
                "user": types.ElicitResult(action="accept", content={"answer": TOKEN}),
                "model": types.CreateMessageResult(
                    role="assistant", content=types.TextContent(type="text", text="ok"), model="m"
                ),
                "roots": types.ListRootsResult(roots=[]),
            }
            await client.call_tool(
                "interview",
                {"topic": "tea"},
                input_responses=responses,
                request_state=interim.request_state,
            )
    [got] = answers(log)
    assert got["arguments"]["state"] == "interview:tea"
    assert got["arguments"]["answers"]["user"]["content"]["answer"] == "[SECRET:GITHUB_TOKEN]"
    # Neither the state nor the responses are a payload of the request's own chain run.
    [call_run] = [r for r in runs if r.event == "tools/call" and r.phase == "request"]
    assert set(call_run.payload) == {"name", "arguments"}


@pytest.mark.parametrize(("mode", "version", "transport"), SESSIONS)
async def test_a_blocked_answer_never_reaches_the_backend(
    tmp_path: Path, mode: str, version: str, transport: str
) -> None:
    log, app = tmp_path / "calls.log", Application(answer="hunter2")
    with anyio.fail_after(LIMIT):
        async with wrapped(mode, transport, log, app, lambda run: None) as client:
            with pytest.raises(Exception) as caught:
                await client.call_tool("interview", {"topic": "tea"})
    assert "user: what do you think of tea?" in app.asked
    # On 2026 the retried request, with its answers, is refused before it is sent.
    assert refused_by(caught.value, version) == "integ-no-leaked-answers"
    assert "hunter2" not in str(getattr(caught.value, "data", None))
    assert "hunter2" not in str(getattr(getattr(caught.value, "error", None), "data", None))
    assert answers(log) == []
    assert "hunter2" not in log.read_text()


async def test_a_tool_with_header_arguments_is_called_without_listing_first(
    tmp_path: Path,
) -> None:
    # The wrapper sends through the SDK session, so it re-lists after HEADER_MISMATCH itself.
    log, port = tmp_path / "calls.log", free_port()
    with running([sys.executable, str(RECORDER), str(log), str(port)], port) as url:
        with anyio.fail_after(LIMIT):
            async with Client(url, mode="auto") as raw:
                assert raw.protocol_version == "2026-07-28"
                result = (
                    await PolicyClient(POLICIES).bind(raw).call_tool("regional", {"region": "eu"})
                )
    assert text_of(result) == "served from eu"
    assert [call["tool"] for call in calls(log)] == ["regional"]


async def _get_or_read(client: PolicyClient, method: str) -> str:
    if method == "prompts/get":
        prompt = await client.get_prompt("welcome")
        return str(getattr(prompt.messages[0].content, "text", ""))
    resource = await client.read_resource("profile://ann")
    return str(getattr(resource.contents[0], "text", ""))


@pytest.mark.parametrize("method", ["prompts/get", "resources/read"])
@pytest.mark.parametrize(("mode", "version", "transport"), MODERN)
async def test_prompts_and_resources_ask_through_the_same_checks(
    tmp_path: Path, mode: str, version: str, transport: str, method: str
) -> None:
    log = tmp_path / "calls.log"
    secret, blocked = Application(answer=f"Ann {TOKEN}"), Application(answer="hunter2")
    with anyio.fail_after(LIMIT):
        async with wrapped(mode, transport, log, secret, lambda run: None) as client:
            shown = await _get_or_read(client, method)
        async with wrapped(mode, transport, log, blocked, lambda run: None) as client:
            with pytest.raises(PolicyBlocked) as caught:
                await _get_or_read(client, method)
    assert shown.endswith(
        "Ann [SECRET:GITHUB_TOKEN]!" if method == "prompts/get" else "Ann [SECRET:GITHUB_TOKEN]"
    )
    assert caught.value.method == method
    assert refused_by(caught.value, version) == "integ-no-leaked-answers"
    [got] = [call["arguments"] for call in calls(log) if call["tool"] == "name-answer"]
    assert got["answer"]["content"]["answer"] == "Ann [SECRET:GITHUB_TOKEN]"
    assert got["state"] == ("welcome" if method == "prompts/get" else "profile:ann")
    assert TOKEN not in log.read_text() and "hunter2" not in log.read_text()

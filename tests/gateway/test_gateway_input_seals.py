"""Sealed 2026-07-28 input-request names answer only the request, and the method, they were
issued for: over the real 2026-07-28 front, in front of the recording backend over HTTP.

`quiz` asks the model under input key `q`; `ask` asks the user under the same key. The
attacker takes the name sealed for quiz's sampling request and puts a user's answer under
it on ask's retry (sampling's rules do not look for leaked passwords), or answers quiz's
sampling request with an elicitation-shaped answer.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from gateway_harness import RECORDER, calls, free_port, local_http_gateway, running, within

pytestmark = pytest.mark.e2e

LIMIT = 60
ACCEPT = {"Accept": "application/json, text/event-stream"}
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"sampling": {}, "elicitation": {}},
}
LEAK = {"action": "accept", "content": {"answer": "hunter2"}}


class Caller:
    def __init__(self, http: httpx2.AsyncClient, url: str) -> None:
        self.http, self.url, self.ids = http, url, itertools.count(1)

    async def call_tool(self, name: str, **extra: Any) -> dict[str, Any]:
        headers = {
            **ACCEPT,
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/call",
            "Mcp-Name": name,
        }
        params = {"name": name, "arguments": {"topic": "x", "question": "x"}, **extra}
        body = {"jsonrpc": "2.0", "id": next(self.ids), "method": "tools/call"}
        body["params"] = {**params, "_meta": ENVELOPE}
        answer: dict[str, Any] = (await self.http.post(self.url, json=body, headers=headers)).json()
        return answer


def asked(answer: dict[str, Any]) -> tuple[str, str]:
    """(the one sealed input-request name, the requestState) of an input_required result."""
    result = answer["result"]
    assert result["resultType"] == "input_required", answer
    (name,) = result["inputRequests"]
    return name, result["requestState"]


def refused_as_unanswerable(answer: dict[str, Any]) -> None:
    assert "error" in answer, answer
    assert answer["error"]["code"] == -32602
    item = answer["error"]["data"]["validationErrors"][0]
    assert item["interceptor"] == "gateway"
    assert "hunter2" not in str(answer)


async def test_a_sealed_name_answers_only_its_own_request_and_method(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    port = free_port()
    backend_argv = [sys.executable, str(RECORDER), str(log), str(port)]
    with running(backend_argv, port) as backend:
        async with (
            local_http_gateway("--backend", f"rec={backend}") as url,
            within(LIMIT),
            httpx2.AsyncClient(timeout=30) as http,
        ):
            caller = Caller(http, url)
            sampling_name, quiz_state = asked(await caller.call_tool("quiz"))
            elicitation_name, ask_state = asked(await caller.call_tool("ask"))
            assert sampling_name.startswith("q~sampling/createMessage~")
            assert elicitation_name.startswith("q~elicitation/create~")
            # quiz's sampling name on ask's retry: a user's answer under sampling's rules.
            swapped = await caller.call_tool(
                "ask", inputResponses={sampling_name: LEAK}, requestState=ask_state
            )
            refused_as_unanswerable(swapped)
            # quiz's own name, but an elicitation-shaped answer to its sampling request.
            reshaped = await caller.call_tool(
                "quiz", inputResponses={sampling_name: LEAK}, requestState=quiz_state
            )
            refused_as_unanswerable(reshaped)
            # Under the name sealed for it, the same answer meets elicitation's rules.
            leaked = await caller.call_tool(
                "ask", inputResponses={elicitation_name: LEAK}, requestState=ask_state
            )
            assert leaked["error"]["data"]["validationErrors"][0]["interceptor"] == (
                "no-leaked-answers"
            )
            # Honest answers still go through, each to the request that asked.
            blue = {"action": "accept", "content": {"answer": "blue"}}
            answered = await caller.call_tool(
                "ask", inputResponses={elicitation_name: blue}, requestState=ask_state
            )
            assert "blue" in answered["result"]["content"][0]["text"]
            model = {
                "role": "assistant",
                "model": "m",
                "content": {"type": "text", "text": "4"},
            }
            noted = await caller.call_tool(
                "quiz", inputResponses={sampling_name: model}, requestState=quiz_state
            )
            assert noted["result"]["content"][0]["text"] == "noted"
    ran = [c["tool"] for c in calls(log)]
    assert ran == ["quiz", "ask", "ask", "quiz", "quiz-answer"]
    assert "hunter2" not in log.read_text()

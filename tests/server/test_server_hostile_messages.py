"""Hostile messages get the same JSON-RPC answer over stdio and over HTTP.

Cases live in ``cases/hostile_messages.json``: each is one line (or body) and
the exact reply. ``BIG_INTEGER`` in a line stands for a 401-digit integer.
HTTP answers messages the transport refuses with status 400, and the rest
(results and method errors, ``http_status`` in the case) with 200.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from server_harness import HttpServer, http_server, raw_stdio

pytestmark = pytest.mark.e2e

CASES: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "cases" / "hostile_messages.json").read_text(encoding="utf-8")
)
INIT = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "hostile", "version": "0"},
    },
}
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@pytest.fixture(scope="module")
def sse_http() -> Iterator[HttpServer]:
    """Answers as server-sent events, where the fractional id is put back in an event."""
    with http_server("--sse") as server:
        yield server


def _reply_of(response: httpx2.Response) -> Any:
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1])
    return response.json()


def _line(case: dict[str, Any]) -> bytes:
    return str(case["line"]).replace("BIG_INTEGER", "1" + "0" * 400).encode()


def _without_envelope(reply: dict[str, Any]) -> dict[str, Any]:
    result = reply.get("result")
    if isinstance(result, dict):
        reply = {**reply, "result": {k: v for k, v in result.items() if k != "durationMs"}}
    return reply


async def test_hostile_messages_over_stdio() -> None:
    with anyio.fail_after(60):
        async with raw_stdio() as wire:
            await wire.handshake()
            for case in CASES:
                await wire.send_line(_line(case))
                reply = await wire.receive()
                assert _without_envelope(reply) == case["reply"], case["name"]


@pytest.mark.parametrize("fixture", ["shared_http", "shared_stateless_http", "sse_http"])
async def test_hostile_messages_over_http(fixture: str, request: pytest.FixtureRequest) -> None:
    server: HttpServer = request.getfixturevalue(fixture)
    with anyio.fail_after(60):
        async with httpx2.AsyncClient(timeout=30) as http:
            opened = await http.post(server.url, json=INIT, headers=HEADERS)
            headers = {**HEADERS, "mcp-protocol-version": "2025-11-25"}
            if "mcp-session-id" in opened.headers:
                headers["mcp-session-id"] = opened.headers["mcp-session-id"]
            for case in CASES:
                response = await http.post(server.url, content=_line(case), headers=headers)
                expected = case["reply"]
                status = case.get("http_status", 200 if "result" in expected else 400)
                assert response.status_code == status, case["name"]
                assert _without_envelope(_reply_of(response)) == expected, case["name"]


async def test_an_oversized_line_is_answered_under_its_own_id() -> None:
    """A 5 MB request (past the default limit) gets -32600 under its id, read from the
    line's first bytes: an answer under ``null`` left an SDK client waiting forever."""
    pad = "x" * 5_000_000
    line = json.dumps(
        {"jsonrpc": "2.0", "id": "big-1", "method": "interceptor/invoke", "params": {"pad": pad}}
    )
    with anyio.fail_after(60):
        async with raw_stdio() as wire:
            await wire.handshake()
            await wire.send_line(line)
            reply = await wire.receive()
            assert reply["id"] == "big-1"
            assert reply["error"]["code"] == -32600
            assert reply["error"]["data"]["reason"] == "message too long"
            await wire.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
            assert (await wire.receive()) == {"jsonrpc": "2.0", "id": 2, "result": {}}

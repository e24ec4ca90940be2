"""What a backend sends reaches the client as it was sent, and a backend's malformed
answer is an error at once rather than a wait for the backend timeout."""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream
from gateway_harness import HERE, ROOT, gateway_argv, gateway_client
from mcp.shared.exceptions import MCPError

pytestmark = pytest.mark.e2e

LIMIT = 60
SCRIPTED = f"scripted={sys.executable} {HERE / 'scripted_backend.py'}"
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"roots": {}},
    "clientInfo": {"name": "raw", "version": "0"},
}


class RawClient:
    """JSON lines to and from the gateway's stdio: the wire exactly as it is."""

    def __init__(self, process: Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.lines = BufferedByteReceiveStream(process.stdout)

    async def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send((json.dumps(message) + "\n").encode())

    async def receive(self) -> dict[str, Any]:
        line = await self.lines.receive_until(b"\n", 1 << 20)
        message: dict[str, Any] = json.loads(line)
        return message


async def test_a_backend_request_without_params_is_forwarded_without_params() -> None:
    argv = [sys.executable, *gateway_argv("--backend", SCRIPTED, policies=[])]
    async with await anyio.open_process(argv, cwd=str(ROOT)) as process:
        client = RawClient(process)
        with anyio.fail_after(LIMIT):
            await client.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT})
            assert (await client.receive())["id"] == 1
            await client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            call = {"name": "ask", "arguments": {}}
            await client.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
            roots = await client.receive()
            assert roots["method"] == "roots/list" and "params" not in roots
            await client.send({"jsonrpc": "2.0", "id": roots["id"], "result": {"roots": []}})
            ping = await client.receive()
            assert ping["method"] == "ping" and "params" not in ping
            await client.send({"jsonrpc": "2.0", "id": ping["id"], "result": {}})
            answer = await client.receive()
        assert answer["id"] == 2
        got = json.loads(answer["result"]["content"][0]["text"])
        assert got == {"roots": {"roots": []}, "ping": {}}
        process.terminate()


@pytest.mark.parametrize("tool", ["bad-result", "string-id", "both"])
async def test_a_malformed_backend_answer_is_an_error_at_once(tool: str) -> None:
    # The backend timeout is far beyond the test's limit: only an answer at once passes.
    args = ("--backend", SCRIPTED, "--backend-timeout", "600")
    with anyio.fail_after(LIMIT):
        async with gateway_client(*args, policies=[]) as client:
            with pytest.raises(MCPError) as caught:
                await client.call_tool(tool, {})
            # The connection still serves.
            assert "ask" in {t.name for t in (await client.list_tools()).tools}
    if tool != "both":  # that one parses as the backend's error, which is passed on
        assert caught.value.code == -32603
        assert caught.value.error.message == "Malformed backend answer"
        assert caught.value.data["server"] == "scripted"
        assert "not an object" not in json.dumps(caught.value.data)

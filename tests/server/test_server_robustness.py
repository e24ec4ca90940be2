"""Every line gets an answer and the server keeps serving (raw pipes, no SDK client).

The SDK's own stdio transport drops both a non-JSON line and a deeply nested
request without replying; these are the cases that used to hang a client.
"""

from __future__ import annotations

import json

import anyio
import pytest
from server_harness import invoke_message, raw_stdio

pytestmark = pytest.mark.e2e


async def test_garbage_and_deep_nesting_are_answered_and_serving_goes_on() -> None:
    with anyio.fail_after(30):
        async with raw_stdio() as wire:
            init = await wire.handshake()
            assert init["id"] == "init"

            await wire.send_line("this is not json")
            assert await wire.receive() == {
                "jsonrpc": "2.0",
                "id": None,
                "error": {
                    "code": -32700,
                    "message": "Parse error",
                    "data": {"reason": "not valid JSON"},
                },
            }

            for depth, request_id in ((600, 41), (100_000, "deep")):
                nested = "[" * depth + "]" * depth
                message = invoke_message(request_id, payload="PLACEHOLDER")
                line = json.dumps(message).replace('"PLACEHOLDER"', nested)
                await wire.send_line(line)
                reply = await wire.receive()
                assert reply["id"] == request_id
                assert reply["error"]["code"] == -32600
                assert reply["error"]["data"] == {"reason": "nesting too deep"}

            # Depth the parser takes is served normally, echoed back by a mutator.
            shallow: object = {"note": "x"}
            for _ in range(100):
                shallow = [shallow]
            await wire.send(invoke_message(7, name="uppercase-note", payload=shallow))
            assert (await wire.receive())["result"]["payload"] == shallow

            await wire.send_line("[1, 2]")
            assert (await wire.receive())["error"]["code"] == -32600
            await wire.send_line('{"jsonrpc": "2.0", "id": 9}')
            assert (await wire.receive()) == {
                "jsonrpc": "2.0",
                "id": 9,
                "error": {
                    "code": -32600,
                    "message": "Invalid Request",
                    "data": {"reason": "not a JSON-RPC 2.0 message"},
                },
            }
            await wire.send_line(b'{"jsonrpc": "2.0", "id": 10, "method": "ping"\xff\xfe}')
            assert (await wire.receive())["error"]["code"] == -32700

            await wire.send({"jsonrpc": "2.0", "id": 11, "method": "ping"})
            assert await wire.receive() == {"jsonrpc": "2.0", "id": 11, "result": {}}
            await wire.send({"jsonrpc": "2.0", "id": 12, "method": "no/such"})
            assert (await wire.receive())["error"]["code"] == -32601


async def test_pipelined_invokes_are_all_answered() -> None:
    """1,000 requests written back to back before reading any answer."""
    count = 1000
    with anyio.fail_after(60):
        async with raw_stdio() as wire:
            await wire.handshake()
            names = ["allow-all", "deny-all", "uppercase-note"]
            batch = "\n".join(
                json.dumps(
                    invoke_message(i, name=names[i % 3], payload={"arguments": {"note": f"n{i}"}})
                )
                for i in range(count)
            )
            await wire.send_line(batch)
            seen: dict[int, dict[str, object]] = {}
            for _ in range(count):
                reply = await wire.receive()
                seen[reply["id"]] = reply["result"]
            assert sorted(seen) == list(range(count))
            for i, result in seen.items():
                assert result["interceptor"] == names[i % 3]
                if i % 3 == 2:
                    assert result["payload"] == {"arguments": {"note": f"N{i}"}}

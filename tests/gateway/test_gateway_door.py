"""What the gateway refuses at the door, so that one client cannot hurt another.

A string that is not Unicode text (JSON's ``"\\ud800"``) used to be accepted,
fail to encode towards the backend, and look like the backend dying: every
other request in flight failed, the backend restarted, and after
``max_restarts`` the gateway stopped. Here a hostile client sends it (in a
value, in a key, in the method) while another request is in flight on the
same backend: the hostile request gets -32602 or -32600 under its own id,
naming where the string is and never quoting it; the other request completes;
the backend is not restarted; the gateway keeps serving.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from balancer import FLOW_KEY
from gateway_harness import (
    HEADERS,
    ROOT,
    Wire,
    calls,
    everything_http,
    free_port,
    gateway_argv,
    gateway_process_argv,
    recorder,
    running,
    text_of,
)
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from policy_engine.gateway.backend import Backend, BackendError, BackendSpec

pytestmark = pytest.mark.e2e

LIMIT = 60
REASON = "string is not valid Unicode (a lone surrogate)"
HOSTILE_ARGS = {
    "value": ('{"text":"x\\ud800y"}', "$.params.arguments.text", False),
    "key": ('{"text":"ok","\\udfffk":1}', "$.params.arguments", True),
}


def hostile_call(request_id: int, arguments: str) -> bytes:
    head = f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call",'
    return (head + f'"params":{{"name":"echo","arguments":{arguments}}}}}').encode()


def assert_refused(reply: dict[str, Any], request_id: int, path: str, in_key: bool) -> None:
    assert reply["id"] == request_id
    assert reply["error"]["code"] == -32602
    data = reply["error"]["data"]
    assert data == {"reason": REASON, "path": path, **({"in": "key"} if in_key else {})}
    assert "\\ud" not in json.dumps(reply).lower()


@asynccontextmanager
async def stdio_wire(log: Path) -> AsyncIterator[Wire]:
    argv = gateway_process_argv("--backend", recorder(log))
    process = await anyio.open_process(argv, cwd=str(ROOT), stderr=subprocess.DEVNULL)
    async with process:
        try:
            yield Wire(process)
        finally:
            assert process.stdin is not None
            await process.stdin.aclose()
            with anyio.move_on_after(10):
                await process.wait()
            if process.returncode is None:
                process.kill()


async def test_stdio_gateway_refuses_a_lone_surrogate_and_keeps_the_call_in_flight(
    tmp_path: Path,
) -> None:
    log = tmp_path / "calls.log"
    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "hostile", "version": "0"},
    }
    with anyio.fail_after(LIMIT):
        async with stdio_wire(log) as wire:
            await wire.send(
                json.dumps(
                    {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}
                ).encode()
            )
            assert "result" in await wire.reply_to(0)
            await wire.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
            slow = {"name": "slow", "arguments": {"steps": 5}}
            await wire.send(
                json.dumps(
                    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": slow}
                ).encode()
            )
            await anyio.sleep(0.5)  # the slow call is running on the backend
            for request_id, (arguments, path, in_key) in enumerate(HOSTILE_ARGS.values(), 2):
                await wire.send(hostile_call(request_id, arguments))
                assert_refused(await wire.reply_to(request_id), request_id, path, in_key)
            await wire.send(b'{"jsonrpc":"2.0","id":9,"method":"ping\\ud800"}')
            method = await wire.reply_to(9)
            assert method["error"]["code"] == -32600
            assert method["error"]["data"] == {"reason": REASON, "path": "$.method"}
            done = await wire.reply_to(1)
            assert done["result"]["content"][0]["text"] == "done", done
            echo = {"name": "echo", "arguments": {"text": "still here"}}
            await wire.send(
                json.dumps(
                    {"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": echo}
                ).encode()
            )
            assert (await wire.reply_to(10))["result"]["content"][0]["text"] == "still here"
            assert wire.process.returncode is None
    # One backend process ran both calls; nothing hostile reached it.
    assert [c["tool"] for c in calls(log)] == ["slow", "echo"]


def http_gateway_argv(port: int, log: Path, front: str) -> list[str]:
    args = ["--http", f"127.0.0.1:{port}", "--backend", recorder(log)]
    if front == "stateless":
        args += ["--stateless", "--flow-key-env", "FLOW_KEY"]
    return [gateway_process_argv()[0], *gateway_argv(*args)]


@pytest.mark.parametrize("front", ["stateful", "stateless"])
async def test_http_gateway_refuses_a_lone_surrogate_while_another_client_waits(
    tmp_path: Path, front: str
) -> None:
    log = tmp_path / "calls.log"
    port = free_port()
    argv = http_gateway_argv(port, log, front)
    with running(argv, port, {"FLOW_KEY": FLOW_KEY}) as url, anyio.fail_after(LIMIT):
        async with (
            httpx2.AsyncClient(timeout=30) as http,
            Client(streamable_http_client(url, http_client=http), mode="legacy") as victim,
        ):
            session = victim.session
            outcome: list[str] = []

            async def in_flight() -> None:
                outcome.append(text_of(await victim.call_tool("slow", {"steps": 5})))

            async with anyio.create_task_group() as tg:
                tg.start_soon(in_flight)
                await anyio.sleep(0.5)
                await _hostile_posts(url, session)
            assert outcome == ["done"]
            assert text_of(await victim.call_tool("echo", {"text": "again"})) == "again"
    assert [c["tool"] for c in calls(log)] == ["slow", "echo"]


async def _hostile_posts(url: str, victim_session: Any) -> None:
    """The hostile client's own session (stateful) or signed id (stateless), then the
    lone surrogates, in 2025 and 2026-07-28 envelopes."""
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "hostile", "version": "0"},
        },
    }
    async with httpx2.AsyncClient(timeout=30) as http:
        opened = await http.post(url, json=init, headers=HEADERS)
        headers = {**HEADERS, "mcp-protocol-version": "2025-11-25"}
        headers["mcp-session-id"] = opened.headers["mcp-session-id"]
        for request_id, (arguments, path, in_key) in enumerate(HOSTILE_ARGS.values(), 2):
            response = await http.post(
                url, content=hostile_call(request_id, arguments), headers=headers
            )
            assert response.status_code == 400
            assert_refused(response.json(), request_id, path, in_key)
        modern = {**HEADERS, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call"}
        response = await http.post(
            url, content=hostile_call(7, HOSTILE_ARGS["value"][0]), headers=modern
        )
        assert response.status_code == 400
        assert_refused(response.json(), 7, "$.params.arguments.text", False)


async def test_an_unwritable_request_to_an_http_backend_is_the_senders_error() -> None:
    """Past the door (a library caller, a mutator), a lone surrogate bound for an HTTP
    backend is refused to its sender: the SDK's writer, and the backend, carry on."""
    exits: list[str] = []

    async def on_exit(backend: Backend, reason: str) -> None:
        exits.append(reason)

    async def ignore(*_args: Any) -> None:
        return None

    with everything_http() as url, anyio.fail_after(LIMIT):
        backend = Backend(
            BackendSpec(name="ev", url=url),
            on_request=ignore,
            on_notification=ignore,
            on_exit=on_exit,
        )
        async with anyio.create_task_group() as tg:
            await backend.connect(tg)
            init = {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            }
            assert "serverInfo" in await backend.request("initialize", init)
            with pytest.raises(BackendError) as refused:
                await backend.request("ping", {"note": "x\ud800"})
            assert refused.value.error.code == -32602
            assert refused.value.error.data == {"reason": REASON, "path": "$.params.note"}
            assert await backend.request("ping", None) == {}
            assert backend.alive and exits == []
            backend.close()

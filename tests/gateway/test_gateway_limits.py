"""`--max-payload-bytes` on the gateway: one bound for the policies and both fronts, and
an oversized message answered under its own id (else an SDK client waits forever)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import anyio
import httpx2
import pytest
from gateway_harness import (
    HEADERS,
    ROOT,
    Wire,
    free_port,
    gateway_argv,
    gateway_client,
    gateway_process_argv,
    recorder,
    running,
    text_of,
)
from mcp.shared.exceptions import MCPError

pytestmark = pytest.mark.e2e

LIMIT = 120
BIG = "x" * 5_300_000
"""A 5.3 MB payload: past the 4 MiB default, as a large file read through a backend is."""


async def test_a_payload_past_the_default_is_refused_under_its_own_id(tmp_path: Path) -> None:
    with anyio.fail_after(LIMIT):
        async with gateway_client("--backend", recorder(tmp_path / "calls.log")) as client:
            with pytest.raises(MCPError) as refused:
                await client.call_tool("echo", {"text": BIG})
            assert refused.value.code == -32600
            assert refused.value.data == {
                "reason": "message too long",
                "maxBytes": 4 * 1024 * 1024 + 64 * 1024,
            }
            assert text_of(await client.call_tool("echo", {"text": "next"})) == "next"


# The redactors read every string of both directions (the tool guard's own size rule
# is a policy's choice, and stays). The echo's result holds the text twice (content and
# structuredContent): 10.6 MB.
REDACTORS = [ROOT / "policies" / "pii.policy", ROOT / "policies" / "secrets.policy"]


async def test_max_payload_bytes_lets_a_big_payload_through_both_ways(tmp_path: Path) -> None:
    args = ["--backend", recorder(tmp_path / "calls.log"), "--max-payload-bytes", "16000000"]
    with anyio.fail_after(LIMIT):
        async with gateway_client(*args, policies=REDACTORS) as client:
            try:
                answer = await client.call_tool("echo", {"text": BIG})
            except MCPError as exc:  # say which interceptor failed, and why
                pytest.fail(f"refused: {exc.error.message} {exc.error.data}")
            assert text_of(answer) == BIG


def _padded(request_id: str) -> bytes:
    params = {"name": "echo", "arguments": {"text": "y" * 70_000}}
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    return json.dumps(message).encode()


TOO_LONG = {"reason": "message too long", "maxBytes": 1000 + 64 * 1024}


async def test_the_same_limit_holds_on_stdio_and_http(tmp_path: Path) -> None:
    backend = ["--backend", recorder(tmp_path / "calls.log"), "--max-payload-bytes", "1000"]
    with anyio.fail_after(LIMIT):
        process = await anyio.open_process(
            gateway_process_argv(*backend), cwd=str(ROOT), stderr=subprocess.DEVNULL
        )
        async with process:
            wire = Wire(process)
            await wire.send(_padded("stdio-1"))
            reply = await wire.reply_to("stdio-1")
            assert reply["error"] == {
                "code": -32600,
                "message": "Invalid Request",
                "data": TOO_LONG,
            }
            assert process.stdin is not None
            await process.stdin.aclose()
            await process.wait()
    port = free_port()
    argv = [gateway_process_argv()[0], *gateway_argv("--http", f"127.0.0.1:{port}", *backend)]
    with running(argv, port) as url:
        async with httpx2.AsyncClient(timeout=30) as http:
            declared = await http.post(url, content=_padded("http-1"), headers=HEADERS)

            async def chunks() -> object:
                body = _padded("http-2")
                for start in range(0, len(body), 8192):
                    yield body[start : start + 8192]

            streamed = await http.post(url, content=chunks(), headers=HEADERS)
    for response, request_id in ((declared, "http-1"), (streamed, "http-2")):
        assert response.status_code == 413
        assert response.json()["id"] == request_id
        assert response.json()["error"]["data"] == TOO_LONG

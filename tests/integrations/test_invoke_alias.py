"""`interceptors/invoke`, the SEP's other spelling: answered as `interceptor/invoke` everywhere.

The SEP's Backward Compatibility section writes `interceptors/invoke` once and
renaming is under discussion upstream; a client that follows that sentence
must get the same answer, not -32601. Each front is a real process reached
over a real transport: `policyc serve` (stdio, whose fast lane answers, and
streamable HTTP), an application server with ``expose_interceptors=True``, and
`policyc gateway --expose-interceptors` (stdio and HTTP fronts).
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from gateway_harness import free_port, local_front_client, raw_request, recorder, running
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

pytestmark = pytest.mark.e2e

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SERVER = HERE / "policy_server.py"
POLICIES = [HERE / "policies" / "integ_test.policy", ROOT / "policies" / "secrets.policy"]
TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
LIMIT = 60
FRONTS = [f"{kind}-{t}" for kind in ("serve", "expose", "gateway") for t in ("stdio", "http")]

REDACT = {
    "name": "secret-redactor",
    "event": "tools/call",
    "phase": "request",
    "payload": {"name": "echo", "arguments": {"text": f"token={TOKEN}"}},
}
UNKNOWN = {"name": "no-such-guard", "event": "tools/call", "phase": "request", "payload": {}}
DENIED = {
    "name": "integ-guard",
    "event": "tools/call",
    "phase": "request",
    "payload": {"name": "shell_exec", "arguments": {"command": "ls"}},
}


@asynccontextmanager
async def _process(argv: list[str], http: bool) -> AsyncIterator[Client]:
    if not http:
        # The whole environment, so the child imports this checkout (PYTHONPATH).
        params = StdioServerParameters(
            command=sys.executable, args=argv, cwd=str(ROOT), env=dict(os.environ)
        )
        async with Client(stdio_client(params), mode="legacy") as client:
            yield client
        return
    port = free_port()
    with running([sys.executable, *argv, str(port)], port) as url:
        async with Client(url, mode="legacy") as client:
            yield client


@asynccontextmanager
async def front(name: str, tmp_path: Path) -> AsyncIterator[Client]:
    kind, transport = name.split("-")
    http = transport == "http"
    if kind == "serve":
        argv = ["-m", "policy_engine.cli.main", "serve", *map(str, POLICIES)]
        async with _process([*argv, "--http"] if http else argv, http) as client:
            yield client
    elif kind == "expose":
        async with _process([str(SERVER), "--expose"], http) as client:
            yield client
    else:
        backend = recorder(tmp_path / "calls.log")
        args = ("--backend", backend, "--expose-interceptors")
        async with local_front_client(transport, *args, policies=POLICIES) as client:
            yield client


async def answer(client: Client, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """A result without its timing, or the error's code, message and data."""
    try:
        result = await raw_request(client, method, params)
    except MCPError as err:
        return {"code": err.code, "message": err.message, "data": err.data}
    result.pop("durationMs", None)
    return result


@pytest.mark.parametrize("name", FRONTS)
async def test_the_plural_spelling_gets_the_same_answers(name: str, tmp_path: Path) -> None:
    with anyio.fail_after(LIMIT):
        async with front(name, tmp_path) as client:
            for params in (REDACT, DENIED, UNKNOWN):
                alias = await answer(client, "interceptors/invoke", params)
                canonical = await answer(client, "interceptor/invoke", params)
                assert alias == canonical, params["name"]
            redacted = await answer(client, "interceptors/invoke", REDACT)
            # Not intercepted on the way in (secret-redactor hooks every event):
            # the handler saw the token and reports the change itself.
            assert redacted["modified"] is True
            assert redacted["payload"]["arguments"]["text"] == "token=[SECRET:GITHUB_TOKEN]"
            assert (await answer(client, "interceptors/invoke", DENIED))["valid"] is False
            assert (await answer(client, "interceptors/invoke", UNKNOWN))["code"] == -32602

"""SEP-2624 Backward Compatibility, against real server processes over stdio.

Interceptors are an optional capability: adding them changes no existing
method (item 2), a client that knows nothing of them works as before
(item 3), and a server without them answers `interceptors/list` with a
standard JSON-RPC error (item 4). The same application server runs twice,
with and without the SEP methods, and a plain SDK client compares what
every existing method answers.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from server_harness import HERE, raw_request

pytestmark = pytest.mark.e2e

SERVER = HERE / "optional_server.py"
EXTENSION = "io.modelcontextprotocol/interceptors"


def _client(*args: str) -> Client:
    params = StdioServerParameters(
        command=sys.executable, args=[str(SERVER), *args], cwd=str(HERE), env=dict(os.environ)
    )
    return Client(stdio_client(params), mode="legacy")


async def _outcome(client: Client, method: str, params: dict[str, Any]) -> dict[str, Any]:
    try:
        return {"result": await raw_request(client, method, params)}
    except MCPError as err:
        return {"code": err.code, "message": err.message}


async def _existing_methods(client: Client) -> dict[str, Any]:
    """What an interceptor-unaware client sees of every method the server has."""
    dump = {
        "tools": (await client.list_tools()).model_dump(),
        "call": (await client.call_tool("echo", {"text": "hi"})).model_dump(),
        "prompts": (await client.list_prompts()).model_dump(),
        "prompt": (await client.get_prompt("greet", {"name": "Ada"})).model_dump(),
        "resources": (await client.list_resources()).model_dump(),
        "read": (await client.read_resource("memo://note")).model_dump(),
        "ping": await _outcome(client, "ping", {}),
        "unknown": await _outcome(client, "no/such-method", {}),
        "bad tool": await _outcome(client, "tools/call", {"name": 5}),
    }
    # The one addition allowed: the extension's own entry where clients look for it.
    capabilities = client.server_capabilities.model_dump()
    for key in ("experimental", "extensions"):
        section = dict(capabilities.get(key) or {})
        section.pop(EXTENSION, None)
        capabilities[key] = section or None
    dump["capabilities"] = capabilities
    return dump


async def test_adding_interceptors_changes_no_existing_method() -> None:
    with anyio.fail_after(60):
        async with _client() as plain:
            before = await _existing_methods(plain)
            missing = await _outcome(plain, "interceptors/list", {})
        async with _client("--interceptors") as extended:
            after = await _existing_methods(extended)
            listed = await raw_request(extended, "interceptors/list", {})
            advertised = extended.server_capabilities.experimental or {}
    assert before["call"]["content"][0]["text"] == "hi"
    assert before["unknown"]["code"] == -32601
    assert after == before
    # Graceful degradation: the server without support answers a standard error.
    assert missing["code"] == -32601
    assert listed["interceptors"] and EXTENSION in advertised

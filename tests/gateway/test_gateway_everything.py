"""The reference "everything" server from npm behind the gateway, alone and federated."""

from __future__ import annotations

import warnings
from pathlib import Path

import anyio
import pytest
from gateway_harness import calls, everything, local_client, recorder, text_of
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

pytestmark = pytest.mark.e2e

LIMIT = 40


async def test_everything_is_transparent() -> None:
    with anyio.fail_after(LIMIT):
        async with local_client("--backend", everything()) as client:
            assert client.server_info is not None
            assert "everything" in client.server_info.name
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert {"echo", "get-sum", "get-env"} <= names
            result = await client.call_tool("get-sum", {"a": 2, "b": 3})
            assert "5" in text_of(result)
            resources = (await client.list_resources()).resources
            assert resources
            read = await client.read_resource(resources[0].uri)
            assert read.contents
            prompts = (await client.list_prompts()).prompts
            assert prompts
            with warnings.catch_warnings():  # deprecated for 2026 sessions; this one is 2025
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await client.send_ping()
            # context.server names the backend: this rule only fires for `ev`.
            with pytest.raises(MCPError) as caught:
                await client.call_tool("get-env", {})
            assert caught.value.data["validationErrors"][0]["interceptor"] == "no-env-on-everything"


async def test_two_backends_federated_with_a_collision(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    with anyio.fail_after(LIMIT):
        async with local_client("--backend", recorder(log), "--backend", everything()) as client:
            assert client.server_info is not None
            assert client.server_info.name == "policyc-gateway"
            names = [tool.name for tool in (await client.list_tools()).tools]
            # `echo` is on both: each copy is prefixed with its backend's name.
            assert "echo" not in names
            assert {"rec__echo", "ev__echo", "get-sum", "lookup_user"} <= set(names)
            # The filter still applies to the recorder's share of the list.
            assert "internal_debug" not in names and "rec__internal_debug" not in names
            assert text_of(await client.call_tool("rec__echo", {"text": "hi"})) == "hi"
            assert text_of(await client.call_tool("ev__echo", {"message": "hi"})) == "Echo: hi"
            assert "5" in text_of(await client.call_tool("get-sum", {"a": 2, "b": 3}))
            # Policies see the backend's own tool name, and which backend it is.
            with pytest.raises(MCPError):
                await client.call_tool("get-env", {})
            with pytest.raises(MCPError):
                await client.call_tool("shell_exec", {"command": "ls"})
            with pytest.raises(MCPError) as caught:
                await client.call_tool("no_such_tool", {})
            assert caught.value.message == "Unknown tool"
            resources = (await client.list_resources()).resources
            assert (await client.read_resource(resources[0].uri)).contents
    assert [c["tool"] for c in calls(log)] == ["echo"]

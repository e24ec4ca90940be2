"""Policies in a real FastMCP server through FastMCP's own middleware, seen by FastMCP's
client in memory and by the SDK's and FastMCP's clients over stdio and streamable HTTP."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import fastmcp
import mcp_types as mt
import pytest
from gateway_harness import free_port, running, text_of
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from policy_engine.compiler import compile_policies, compile_sources
from policy_engine.integrations import UnsupportedServer, install_policies
from policy_engine.integrations.fastmcp import FastMCPPolicyMiddleware
from policy_engine.wire import Principal

pytestmark = pytest.mark.e2e

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from fastmcp_server import POLICIES, build  # noqa: E402

SERVER = HERE / "fastmcp_server.py"
GITHUB = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"


def _items(data: Any) -> list[str]:
    return [item["interceptor"] for item in (data or {}).get("validationErrors", [])]


async def test_a_hidden_tool_is_refused_even_to_a_client_that_never_listed() -> None:
    """Attack: skip tools/list and call what it would hide. FastMCP's client opens a
    connection per request, so nothing this connection listed could remember it."""
    with anyio.fail_after(60):
        async with fastmcp.Client(build()) as client:
            with pytest.raises(MCPError):
                await client.call_tool("internal_debug", {})
            names = [tool.name for tool in await client.list_tools()]
            with pytest.raises(MCPError):
                await client.call_tool("internal_debug", {})
    assert "internal_debug" not in names and "echo" in names


async def test_in_memory_blocks_redacts_and_passes() -> None:
    with anyio.fail_after(60):
        async with fastmcp.Client(build()) as client:
            passed = await client.call_tool("echo", {"text": "hello"})
            redacted = await client.call_tool("fetch_config", {})
            with pytest.raises(MCPError) as caught:
                await client.call_tool("shell_exec", {"command": "ls"})
    assert passed.data == "hello"
    assert GITHUB not in str(redacted) and "[SECRET:GITHUB_TOKEN]" in text_of(redacted)
    assert caught.value.code == -32602 and _items(caught.value.data) == ["integ-guard"]


async def test_the_principal_decides_per_call() -> None:
    admin = Principal(type="user", id="ada", claims={"roles": ["admin"]})
    guest = Principal(type="user", id="bob", claims={"roles": []})
    with anyio.fail_after(60):
        async with fastmcp.Client(build(principal=admin)) as client:
            allowed = await client.call_tool("deploy", {"target": "prod"})
        async with fastmcp.Client(build(principal=lambda context: guest)) as client:
            with pytest.raises(MCPError) as caught:
                await client.call_tool("deploy", {"target": "prod"})
    assert allowed.data == "deployed prod"
    assert _items(caught.value.data) == ["integ-needs-admin"]


async def test_a_change_fastmcp_cannot_carry_fails_closed() -> None:
    """A policy that renames a listed tool cannot be honoured on FastMCP's objects:
    the list is refused rather than served unchanged."""
    source = """
mutator rename "Renames a tool" {
  on tools/list response
  set $.tools[0].name = "other"
}
mutator describe "Rewrites descriptions" {
  on tools/list response
  set $.tools[*].description = "checked"
}
"""
    rename, describe = source.split("}\n", 1)
    for text, expect_error in ((rename + "}\n", True), (describe, False)):
        policies = compile_sources({"p.policy": text})
        server = fastmcp.FastMCP("x")

        @server.tool
        def echo(text: str) -> str:
            """Echo."""
            return text

        server.add_middleware(FastMCPPolicyMiddleware(policies))
        with anyio.fail_after(60):
            async with fastmcp.Client(server) as client:
                if expect_error:
                    with pytest.raises(MCPError) as caught:
                        await client.list_tools()
                    assert caught.value.code == -32603
                else:
                    listed = await client.list_tools()
                    assert [t.description for t in listed] == ["checked"]


async def test_result_style_blocks_read_as_an_error_result() -> None:
    with anyio.fail_after(60):
        async with fastmcp.Client(build(block_style="result")) as client:
            result = await client.call_tool("shell_exec", {"command": "ls"}, raise_on_error=False)
    assert result.is_error
    assert text_of(result) == "Blocked by policy: tool is blocked by policy"
    assert result.meta is not None
    assert _items(result.meta["io.policyc/blocked"]) == ["integ-guard"]


@asynccontextmanager
async def over(transport: str) -> AsyncIterator[Client]:
    if transport == "stdio":
        # The SDK passes a child only a few variables: keep PYTHONPATH, so it runs this checkout.
        params = StdioServerParameters(
            command=sys.executable, args=[str(SERVER)], env=dict(os.environ)
        )
        async with Client(stdio_client(params), mode="legacy") as client:
            yield client
        return
    port = free_port()
    with running([sys.executable, str(SERVER), str(port)], port) as url:
        async with Client(url, mode="legacy") as client:
            yield client


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_real_transport_sees_the_sep_error(transport: str) -> None:
    with anyio.fail_after(90):
        async with over(transport) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            with pytest.raises(MCPError) as blocked:
                await client.call_tool("shell_exec", {"command": "ls"})
            with pytest.raises(MCPError) as hidden:
                await client.call_tool("internal_debug", {})
            redacted = text_of(await client.call_tool("fetch_config", {}))
    assert "internal_debug" not in names
    assert blocked.value.code == -32602
    assert blocked.value.message == "Interceptor validation failed"
    assert _items(blocked.value.data) == ["integ-guard"] and "ls" not in str(blocked.value.data)
    assert _items(hidden.value.data) == ["integ-hide"]
    assert GITHUB not in redacted and "region=eu" in redacted


async def test_fastmcp_client_over_http_is_refused_a_hidden_tool() -> None:
    port = free_port()
    with running([sys.executable, str(SERVER), str(port)], port) as url:
        with anyio.fail_after(90):
            async with fastmcp.Client(url) as client:
                with pytest.raises(MCPError):
                    await client.call_tool("internal_debug", {})


def test_install_policies_on_fastmcp_names_the_fastmcp_middleware() -> None:
    server = fastmcp.FastMCP("x")
    with pytest.raises(UnsupportedServer) as caught:
        install_policies(server, compile_policies(POLICIES))
    assert "policy_engine.integrations.fastmcp" in str(caught.value)
    assert "FastMCPPolicyMiddleware" in str(caught.value)


PROMPT_AND_RESOURCE_POLICY = """
validator no-secret-prompts "The secret prompt is refused" {
  on prompts/get request
  deny if $.name == "secret" "this prompt is not for you" code secret-prompt
}
mutator redact-notes "Passwords never leave in a resource" {
  on resources/read response
  redact $.contents[*].text matching /password=\\S+/ with "password=[HIDDEN]"
}
mutator redact-prompts "Passwords never leave in a prompt" {
  on prompts/get response
  redact $.messages[*].content.text matching /password=\\S+/ with "password=[HIDDEN]"
}
mutator hide-private "Private resources are not listed" {
  on resources/list response
  remove $.resources[?(@.uri == 'notes://private')]
}
validator quiet "No completions of secrets" {
  on completion/complete request
  deny if $.argument.value == "secret" "no completing secrets" code no-secret
}
"""


def _prompt_and_resource_server() -> fastmcp.FastMCP:
    server = fastmcp.FastMCP("notes")

    @server.prompt
    def secret() -> str:
        """A prompt policies refuse."""
        return "the secret plan"

    @server.prompt
    def onboarding() -> str:
        """A prompt that leaks a password."""
        return "log in with password=hunter2 today"

    @server.resource("notes://public")
    def public() -> str:
        return "wifi password=letmein please"

    @server.resource("notes://private")
    def private() -> str:
        return "private notes"

    server.add_middleware(
        FastMCPPolicyMiddleware(compile_sources({"p.policy": PROMPT_AND_RESOURCE_POLICY}))
    )
    return server


async def test_prompts_resources_and_other_requests_go_through_the_chain() -> None:
    with anyio.fail_after(60):
        async with fastmcp.Client(_prompt_and_resource_server()) as client:
            with pytest.raises(MCPError) as refused:
                await client.get_prompt("secret")
            prompt = await client.get_prompt("onboarding")
            listed = [str(r.uri) for r in await client.list_resources()]
            read = await client.read_resource("notes://public")
            with pytest.raises(MCPError) as hidden:
                await client.read_resource("notes://private")
            ref = mt.PromptReference(type="ref/prompt", name="onboarding")
            with pytest.raises(MCPError) as completed:
                await client.complete(ref, {"name": "topic", "value": "secret"})
            with pytest.raises(MCPError) as unserved:  # passed on; this server has no completions
                await client.complete(ref, {"name": "topic", "value": "plans"})
    assert _items(refused.value.data) == ["no-secret-prompts"]
    assert "hunter2" not in str(prompt) and "password=[HIDDEN]" in str(prompt)
    assert listed == ["notes://public"]
    assert "letmein" not in str(read) and "password=[HIDDEN]" in str(read)
    assert _items(hidden.value.data) == ["hide-private"]
    assert _items(completed.value.data) == ["quiet"]
    assert unserved.value.code == -32601

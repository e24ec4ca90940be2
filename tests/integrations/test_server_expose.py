"""A server that also exposes its interceptors (``expose_interceptors=True``), seen by real peers.

The SDK's client lists and calls its tools and sends it the SEP methods; an
``InterceptorChain`` runs its interceptors as a remote interceptor server; and
every SEP answer is the one ``policyc serve`` gives for the same policies
(cases in expose_cases.json). ``open_policies`` exposes remote interceptors
too and withdraws everything when its block ends (seen through the SDK's
in-memory client). Without the option the methods are absent
(test_server_middleware.py).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from gateway_harness import free_port, raw_request, running, text_of
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError
from mcp_types import ListToolsResult, Tool

from policy_engine.chain import InterceptorChain, ServerSpec
from policy_engine.compiler import compile_policies
from policy_engine.integrations import install_policies, open_policies
from policy_engine.server import EXTENSION_ID
from policy_engine.wire import ChainExecutionParams

pytestmark = pytest.mark.e2e

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SERVER = HERE / "policy_server.py"
POLICIES = [HERE / "policies" / "integ_test.policy", ROOT / "policies" / "secrets.policy"]
TOOL_GUARD = ROOT / "policies" / "tool-guard.policy"
CASES = json.loads((HERE / "expose_cases.json").read_text())
TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"


@asynccontextmanager
async def serving(
    argv: list[str], transport: str, mode: str = "legacy"
) -> AsyncIterator[tuple[Client, ServerSpec]]:
    """An SDK client on the server, and how a chain reaches the same server."""
    if transport == "stdio":
        # The SDK passes a child only a few variables: keep PYTHONPATH, so it runs this checkout.
        params = StdioServerParameters(
            command=sys.executable, args=argv, cwd=str(ROOT), env=dict(os.environ)
        )
        async with Client(stdio_client(params), mode=mode) as client:
            yield client, ServerSpec(command=(sys.executable, *argv), cwd=str(ROOT))
        return
    port = free_port()
    with running([sys.executable, *argv, str(port)], port) as url:
        async with Client(url, mode=mode) as client:
            yield client, ServerSpec(url=url)


def exposing(transport: str, mode: str = "legacy") -> Any:
    return serving([str(SERVER), "--expose"], transport, mode)


def policyc_serve(transport: str) -> Any:
    argv = ["-m", "policy_engine.cli.main", "serve", *map(str, POLICIES)]
    return serving(argv if transport == "stdio" else [*argv, "--http"], transport)


async def answer(client: Client, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """A SEP answer without its timing: a result, or the error's code, message and data."""
    try:
        result = await raw_request(client, method, params)
    except MCPError as err:
        return {"code": err.code, "message": err.message, "data": err.data}
    result.pop("durationMs", None)
    return result


async def check_tools_are_served_under_policies(client: Client) -> None:
    names = [tool.name for tool in (await client.list_tools()).tools]
    assert "echo" in names and "internal_debug" not in names
    assert text_of(await client.call_tool("echo", {"text": "hello"})) == "hello"
    with pytest.raises(MCPError) as caught:
        await client.call_tool("shell_exec", {"command": "ls"})
    assert caught.value.data["validationErrors"][0]["interceptor"] == "integ-guard"


async def check_the_extension_is_advertised(client: Client) -> None:
    """Where each era looks: `extensions` (2026 discover), `experimental` (older clients)."""
    capabilities = client.server_capabilities
    sections = [capabilities.experimental or {}]
    if client.session.protocol_version >= "2026-07-28":
        sections.append(capabilities.extensions or {})
    for section in sections:
        assert {"tools/call", "tools/list"} <= set(section[EXTENSION_ID]["supportedEvents"])


async def check_the_sep_methods_are_not_intercepted(client: Client) -> None:
    """secret-redactor hooks every event: were `interceptor/invoke` intercepted, the token
    would be gone before the handler saw it, and the invoke would report no change."""
    verdict = await raw_request(
        client,
        "interceptor/invoke",
        {
            "name": "secret-redactor",
            "event": "tools/call",
            "phase": "request",
            "payload": {"name": "echo", "arguments": {"text": f"token={TOKEN}"}},
        },
    )
    assert verdict["modified"] is True
    assert verdict["payload"]["arguments"]["text"] == "token=[SECRET:GITHUB_TOKEN]"


async def check_a_chain_runs_the_servers_interceptors(spec: ServerSpec) -> None:
    async with InterceptorChain.connect(servers=[spec]) as chain:
        assert {"integ-guard", "integ-hide", "secret-redactor"} <= {e.name for e in chain.entries}
        blocked = await chain.execute(
            ChainExecutionParams(
                event="tools/call",
                phase="request",
                payload={"name": "shell_exec", "arguments": {"command": "ls"}},
            ),
            side="receiving",
        )
        assert not blocked.allowed
        assert blocked.aborted_at is not None and blocked.aborted_at.interceptor.endswith(
            "integ-guard"
        )
        redacted = await chain.execute(
            ChainExecutionParams(
                event="tools/call",
                phase="response",
                payload={"content": [{"type": "text", "text": f"token={TOKEN}"}]},
            ),
            side="sending",
        )
        assert redacted.allowed
        assert redacted.final_payload["content"][0]["text"] == "token=[SECRET:GITHUB_TOKEN]"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_tool_server_that_exposes_its_interceptors(transport: str, mode: str) -> None:
    with anyio.fail_after(120):
        async with exposing(transport, mode) as (client, spec):
            assert (client.session.protocol_version >= "2026") == (mode == "auto")
            await check_tools_are_served_under_policies(client)
            await check_the_extension_is_advertised(client)
            await check_the_sep_methods_are_not_intercepted(client)
            await check_a_chain_runs_the_servers_interceptors(spec)
            await check_tools_are_served_under_policies(client)


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_the_sep_answers_are_policyc_serves(transport: str) -> None:
    with anyio.fail_after(120):
        async with exposing(transport) as (exposed, _), policyc_serve(transport) as (serve, _):
            for case in CASES:
                got = await answer(exposed, case["method"], case["params"])
                assert got == await answer(serve, case["method"], case["params"]), case["id"]
                assert case["expect"].items() <= got.items(), (case["id"], got)


async def list_tools(_ctx: Any, _params: Any) -> ListToolsResult:
    return ListToolsResult(tools=[Tool(name="echo", input_schema={"type": "object"})])


async def test_open_policies_exposes_remote_interceptors_and_withdraws_them() -> None:
    """A low-level server, a policy set and a remote `policyc serve`: the whole chain is
    exposed while the block is open, nothing of it is left once it closes, and the
    server may expose a chain again afterwards."""
    server: Server[Any] = Server("tools", on_list_tools=list_tools)
    before = list(server.middleware)
    remote = ServerSpec(
        command=(sys.executable, "-m", "policy_engine.cli.main", "serve", str(TOOL_GUARD)),
        cwd=str(ROOT),
    )
    local = compile_policies([POLICIES[0]])
    shell = {"name": "shell_exec", "arguments": {"command": "rm -rf /"}}
    with anyio.fail_after(60):
        async with (
            open_policies(server, local, interceptors=[remote], expose_interceptors=True),
            Client(server, mode="legacy") as client,
        ):
            await check_the_extension_is_advertised(client)
            listed = await raw_request(client, "interceptors/list", {})
            names = {d["name"] for d in listed["interceptors"]}
            assert {"integ-guard", "tool-guard", "admin-only-tools"} <= names
            verdict = await raw_request(
                client,
                "interceptor/invoke",
                {
                    "name": "tool-guard",
                    "event": "tools/call",
                    "phase": "request",
                    "payload": shell,
                },
            )
            assert verdict["valid"] is False
        assert server.middleware == before
        async with Client(server, mode="legacy") as client:
            assert EXTENSION_ID not in (client.server_capabilities.experimental or {})
            with pytest.raises(MCPError) as caught:
                await raw_request(client, "interceptors/list", {})
            assert caught.value.code == -32601
        install_policies(server, local, expose_interceptors=True)
        async with Client(server, mode="legacy") as client:
            listed = await raw_request(client, "interceptors/list", {})
            assert "integ-guard" in {d["name"] for d in listed["interceptors"]}


def test_a_server_exposes_one_chain_only() -> None:
    server: Server[Any] = Server("tools", on_list_tools=list_tools)
    policies = compile_policies([POLICIES[0]])
    install_policies(server, policies, expose_interceptors=True)
    before = list(server.middleware)
    with pytest.raises(ValueError, match="already answers `interceptors/list`"):
        install_policies(server, policies, expose_interceptors=True)
    assert server.middleware == before

"""The wrapped SDK Client against real servers: the recording backend and the npm "everything"."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from gateway_harness import EVERYTHING, RECORDER, calls, text_of
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp_types import CreateMessageResult, TextContent

from policy_engine.compiler import compile_policies
from policy_engine.integrations import PolicyBlocked, PolicyClient

pytestmark = pytest.mark.e2e

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
POLICIES = compile_policies(
    [HERE / "policies" / "integ_test.policy", ROOT / "policies" / "secrets.policy"]
)
LIMIT = 60


def stdio(command: str, *args: str, env: dict[str, str] | None = None) -> Any:
    params = StdioServerParameters(
        command=command, args=list(args), env={**os.environ, **(env or {})}
    )
    return stdio_client(params)


async def test_blocked_call_never_leaves_the_client(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    policies = PolicyClient(POLICIES)
    with anyio.fail_after(LIMIT):
        async with Client(stdio(sys.executable, str(RECORDER), str(log)), mode="legacy") as raw:
            client = policies.bind(raw)
            assert text_of(await client.call_tool("echo", {"text": "hi"})) == "hi"
            with pytest.raises(PolicyBlocked) as caught:
                await client.call_tool("shell_exec", {"command": "rm -rf /"})
            names = [tool.name for tool in (await client.list_tools()).tools]
            with pytest.raises(PolicyBlocked):
                await client.call_tool("internal_debug", {})
    assert caught.value.error.code == -32602
    assert caught.value.run is not None and caught.value.run.aborted_at is not None
    assert caught.value.run.aborted_at.interceptor == "integ-guard"
    assert "internal_debug" not in names
    assert [c["tool"] for c in calls(log)] == ["echo"]


async def test_sampling_is_checked_before_the_callback(tmp_path: Path) -> None:
    asked: list[str] = []
    policies = PolicyClient(POLICIES)

    async def sample(context: Any, params: Any) -> CreateMessageResult:
        asked.append(params.messages[0].content.text)
        return CreateMessageResult(
            role="assistant", content=TextContent(type="text", text="ok"), model="m"
        )

    transport = stdio(sys.executable, str(RECORDER), str(tmp_path / "calls.log"))
    with anyio.fail_after(LIMIT):
        async with Client(
            transport, mode="legacy", sampling_callback=policies.sampling(sample)
        ) as raw:
            client = policies.bind(raw)
            fine = await client.call_tool("summarize", {"text": "the weather"})
            with pytest.raises(MCPError) as refused:
                await client.call_tool("summarize", {"text": "please exfiltrate it"})
    assert text_of(fine) == "model said: ok"
    assert refused.value.code == -32602  # the server got the SEP error as its answer
    assert asked == ["the weather"]


async def test_everything_result_is_redacted() -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2
    transport = stdio("node", str(EVERYTHING), "stdio", env={"DEPLOY_TOKEN": token})
    policies = PolicyClient(POLICIES)
    with anyio.fail_after(LIMIT):
        async with Client(transport, mode="legacy") as raw:
            client = policies.bind(raw)
            result = await client.call_tool("get-env", {})
            echoed = await client.call_tool("echo", {"message": "hello"})
            with pytest.raises(PolicyBlocked):
                await client.call_tool("shell_exec", {"command": "ls"})
    assert token not in text_of(result)
    assert "[SECRET:GITHUB_TOKEN]" in text_of(result)
    assert text_of(echoed) == "Echo: hello"

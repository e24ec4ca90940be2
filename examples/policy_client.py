"""A client with policies installed: run `python examples/policy_client.py`.

It starts the repository's demo MCP server (examples/gateway-demo/demo_backend.py)
over stdio, wraps the SDK's client with the shipped policies and shows a
filtered tool list, a call refused before it leaves and a passed call.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from policy_engine.compiler import compile_policies
from policy_engine.integrations import PolicyBlocked, PolicyClient

ROOT = Path(__file__).resolve().parents[1]
BACKEND = ROOT / "examples" / "gateway-demo" / "demo_backend.py"
POLICIES = [ROOT / "policies" / name for name in ("tool-guard.policy", "tool-filter.policy")]


async def main() -> None:
    policies = PolicyClient(compile_policies(POLICIES))
    params = StdioServerParameters(command=sys.executable, args=[str(BACKEND)])
    async with Client(stdio_client(params), mode="legacy") as raw:
        client = policies.bind(raw)
        print("tools ->", sorted(tool.name for tool in (await client.list_tools()).tools))
        try:
            await client.call_tool("shell_exec", {"command": "ls"})
        except PolicyBlocked as err:
            aborted = err.run.aborted_at if err.run is not None else None
            print("shell_exec -> blocked in the client by", aborted and aborted.interceptor)
        found = await client.call_tool("search_docs", {"query": "refunds"})
        print("search_docs ->", found.content[0].text)  # type: ignore[union-attr]


if __name__ == "__main__":
    anyio.run(main)

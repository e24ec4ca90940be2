"""The README's demo: the gateway with the shipped policies in front of an ordinary MCP
server, driven by the official MCP SDK client.

It starts ``policyc gateway policies/ examples/gateway-demo/demo.policy --backend
acme=...`` as a real stdio MCP server, connects with the SDK client exactly as an
agent host would, and shows a filtered tool list, a blocked call (which the
backend never sees), a redacted result and a call that passes untouched. Runs
from a checkout: ``bash scripts/demo.sh`` (or ``python scripts/demo.py``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "gateway-demo"


def banner(text: str) -> None:
    print(f"\n== {text}", flush=True)


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def call(client: Client, name: str, arguments: dict[str, Any]) -> None:
    print(f"  -> tools/call {name} {json.dumps(arguments)}")
    try:
        result = await client.call_tool(name, arguments)
    except MCPError as err:
        print(f"  <- JSON-RPC error {err.code} {err.message!r}")
        for item in (err.data or {}).get("validationErrors", []):
            print(f"       {item['interceptor']}: {item['message']}")
        return
    print(f"  <- {text_of(result)}")


async def demo() -> int:
    backend = f"acme={sys.executable} {EXAMPLE / 'demo_backend.py'}"
    argv = ["-m", "policy_engine.cli.main", "gateway", str(ROOT / "policies")]
    argv += [str(EXAMPLE / "demo.policy"), "--backend", backend]
    banner("policyc gateway policies/ examples/gateway-demo/demo.policy --backend acme=...")
    params = StdioServerParameters(command=sys.executable, args=argv, cwd=str(ROOT))
    with anyio.fail_after(60):
        async with Client(stdio_client(params), mode="legacy") as client:
            info = client.server_info
            print(f"  connected to {info.name if info else '?'} through the gateway (unchanged)")

            banner("tools/list: the backend has 4 tools; a policy hides one")
            for tool in (await client.list_tools()).tools:
                print(f"  {tool.name:<16} {tool.description}")
            await call(client, "debug_dump", {})

            banner("a call the tool guard blocks: the backend never sees it")
            await call(client, "shell_exec", {"cmd": "rm -rf /"})

            banner("a result with personal data: redacted before the client sees it")
            await call(client, "lookup_customer", {"name": "Ann"})

            banner("an ordinary call passes untouched")
            await call(client, "search_docs", {"query": "holidays"})
    return 0


def main() -> None:
    sys.exit(anyio.run(demo))


if __name__ == "__main__":
    main()

"""A FastMCP server with policies as FastMCP middleware: run `python examples/fastmcp_server.py`.

Needs `pip install 'policyc[fastmcp]'`. It builds a FastMCP server, adds the
shipped tool guard and secret redactor as middleware, connects FastMCP's own
client to it (in memory) and shows a passed, a blocked and a redacted call.
"""

from __future__ import annotations

from pathlib import Path

import anyio
from fastmcp import Client, FastMCP
from mcp.shared.exceptions import MCPError

from policy_engine.compiler import compile_policies
from policy_engine.integrations.fastmcp import FastMCPPolicyMiddleware

POLICIES = Path(__file__).resolve().parents[1] / "policies"

server = FastMCP("inventory")


@server.tool
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool
def shell_exec(command: str) -> str:
    """Run a shell command (the tool guard blocks it)."""
    return f"ran {command}"


@server.tool
def fetch_config() -> str:
    """A config that carries a credential (the redactor removes it)."""
    return "token=ghp_abcdefghijklmnopqrstuvwxyz0123456789 region=eu"


server.add_middleware(
    FastMCPPolicyMiddleware(
        compile_policies([POLICIES / "tool-guard.policy", POLICIES / "secrets.policy"])
    )
)


async def main() -> None:
    async with Client(server) as client:
        print("echo ->", (await client.call_tool("echo", {"text": "hello"})).data)
        try:
            await client.call_tool("shell_exec", {"command": "ls"})
        except MCPError as err:
            reasons = [item["message"] for item in err.data["validationErrors"]]
            print("shell_exec -> blocked:", err.code, err.message, reasons)
        print("fetch_config ->", (await client.call_tool("fetch_config", {})).data)


if __name__ == "__main__":
    anyio.run(main)

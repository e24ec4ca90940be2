"""A tool server with policies installed: run `python examples/policy_server.py`.

It builds an MCPServer, installs the shipped tool guard and secret redactor in
front of it, connects the SDK's own client to it (in-process) and shows a
passed, a blocked and a redacted call.
"""

from __future__ import annotations

from pathlib import Path

import anyio
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError

from policy_engine.compiler import compile_policies
from policy_engine.integrations import install_policies

POLICIES = Path(__file__).resolve().parents[1] / "policies"

server = MCPServer("inventory")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool()
def shell_exec(command: str) -> str:
    """Run a shell command (the tool guard blocks it)."""
    return f"ran {command}"


@server.tool()
def fetch_config() -> str:
    """A config that carries a credential (the redactor removes it)."""
    return "token=ghp_abcdefghijklmnopqrstuvwxyz0123456789 region=eu"


install_policies(
    server, compile_policies([POLICIES / "tool-guard.policy", POLICIES / "secrets.policy"])
)


async def main() -> None:
    async with Client(server) as client:
        passed = await client.call_tool("echo", {"text": "hello"})
        print("echo ->", passed.content[0].text)  # type: ignore[union-attr]
        try:
            await client.call_tool("shell_exec", {"command": "ls"})
        except MCPError as err:
            reasons = [item["message"] for item in err.data["validationErrors"]]
            print("shell_exec -> blocked:", err.code, err.message, reasons)
        redacted = await client.call_tool("fetch_config", {})
        print("fetch_config ->", redacted.content[0].text)  # type: ignore[union-attr]


if __name__ == "__main__":
    anyio.run(main)

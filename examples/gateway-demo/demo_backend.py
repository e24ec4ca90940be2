"""The demo's backend: an ordinary MCP server (the SDK's high-level API) that knows
nothing about policies. The gateway in front of it is what keeps it in line."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("acme-tools", instructions="Acme's internal tools")


@server.tool()
def search_docs(query: str) -> str:
    """Searches the handbook."""
    return f"3 pages match {query!r}"


@server.tool()
def lookup_customer(name: str) -> str:
    """Returns a customer record (with personal data in it)."""
    return f"{name}: email ann.lee@example.com, SSN 123-45-6789, card 4111 1111 1111 1111"


@server.tool()
def shell_exec(cmd: str) -> str:
    """Runs a shell command on the server (it should never be reached)."""
    return f"ran {cmd}"


@server.tool()
def debug_dump() -> str:
    """Dumps internal state; not for agents."""
    return "internal state"


if __name__ == "__main__":
    server.run()

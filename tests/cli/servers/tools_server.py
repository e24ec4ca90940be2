"""An MCP server with two tools and nothing else, written with the MCP SDK only.

`policyc check --server` fetches its tools/list over stdio in the CLI tests.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("tools-fixture")


@server.tool()
def search(query: str, limit: int = 10) -> str:
    """Search the index."""
    return f"{limit} results for {query}"


@server.tool()
def read_file(path: str) -> str:
    """Read one file."""
    return path


if __name__ == "__main__":
    server.run()

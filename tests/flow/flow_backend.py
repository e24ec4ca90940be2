"""A filesystem-like or a database-like MCP server (SDK high-level API) that records its calls.

``python flow_backend.py filesystem|database LOG_FILE``. The filesystem server's
`read_file` returns a file holding a fake AWS key, so a test can watch that
key try to travel to the database server through the gateway.
"""

from __future__ import annotations

import json
import sys

from mcp.server.mcpserver import MCPServer

ROLE, LOG = sys.argv[1], sys.argv[2]
SECRET = "AKIAIOSFODNN7EXAMPLE"
server = MCPServer(ROLE)


def record(tool: str, **arguments: object) -> None:
    with open(LOG, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"server": ROLE, "tool": tool, "arguments": arguments}) + "\n")


if ROLE == "filesystem":

    @server.tool()
    def read_file(path: str) -> str:
        """Returns the file: an environment file with a key in it."""
        record("read_file", path=path)
        return f"AWS_ACCESS_KEY_ID={SECRET}\nREGION=eu-west-1"

    @server.tool()
    def write_file(path: str, text: str) -> str:
        """Writes a file."""
        record("write_file", path=path, text=text)
        return "written"

else:

    @server.tool()
    def write_query(sql: str) -> str:
        """Runs a write query."""
        record("write_query", sql=sql)
        return "1 row"


if __name__ == "__main__":
    server.run("stdio")

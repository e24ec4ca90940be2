"""A hostile stdio MCP server: its tools/list answer nests an input schema 5,000 levels deep.

Written as raw JSON-RPC lines, since no SDK server would send it.
"""

from __future__ import annotations

import json
import sys

DEPTH = 5000


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        if message["method"] == "initialize":
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "deep", "version": "1"},
            }
            body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})
        elif message["method"] == "tools/list":
            schema = '{"type": "object", "properties": {"a": ' * DEPTH + "{}" + "}}" * DEPTH
            tools = '{"tools": [{"name": "t", "inputSchema": ' + schema + "}]}"
            ident = json.dumps(message["id"])
            body = '{"jsonrpc": "2.0", "id": ' + ident + ', "result": ' + tools + "}"
        else:
            body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {}})
        sys.stdout.write(body + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()

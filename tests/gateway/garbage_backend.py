"""A broken backend: a correct handshake, then a line that is not JSON for every request."""

from __future__ import annotations

import json
import sys

for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        result = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "garbage", "version": "0"},
        }
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        sys.stdout.write(json.dumps(reply) + "\n")
    elif "id" in message:
        sys.stdout.write("this is not JSON-RPC {\n")
    sys.stdout.flush()

"""A backend that writes raw JSON-RPC lines, for what an SDK server would never send.

``tools/call`` by name: ``ask`` sends the client a ``roots/list`` and a ``ping``
without params (as the TypeScript SDK does) and answers with what came back;
``bad-result``, ``string-id`` and ``both`` answer with a non-object result, the
request's id as text, and both a result and an error.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def wait_for(request_id: str) -> dict[str, Any]:
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("id") == request_id and "method" not in message:
            return message
    raise SystemExit(0)


def call(request_id: Any, name: str) -> None:
    text = {"content": [{"type": "text", "text": "ok"}], "isError": False}
    if name == "ask":
        send({"jsonrpc": "2.0", "id": "roots-1", "method": "roots/list"})
        roots = wait_for("roots-1")
        send({"jsonrpc": "2.0", "id": "ping-1", "method": "ping"})
        pong = wait_for("ping-1")
        got = json.dumps({"roots": roots.get("result"), "ping": pong.get("result")})
        send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "result": {**text, "content": [{"type": "text", "text": got}]},
            }
        )
    elif name == "bad-result":
        send({"jsonrpc": "2.0", "id": request_id, "result": "not an object"})
    elif name == "string-id":
        send({"jsonrpc": "2.0", "id": str(request_id), "result": text})
    elif name == "both":
        error = {"code": -32000, "message": "and an error"}
        send({"jsonrpc": "2.0", "id": request_id, "result": text, "error": error})
    else:
        send({"jsonrpc": "2.0", "id": request_id, "result": text})


TOOLS = [
    {"name": name, "inputSchema": {"type": "object"}}
    for name in ("ask", "bad-result", "string-id", "both")
]

for line in sys.stdin:
    message = json.loads(line)
    method, request_id = message.get("method"), message.get("id")
    if method == "initialize":
        result = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "scripted", "version": "0"},
        }
        send({"jsonrpc": "2.0", "id": request_id, "result": result})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        call(request_id, message["params"]["name"])
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": request_id, "result": {}})

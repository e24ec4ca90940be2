"""A backend that pages its lists: one element a page, the hidden one always on page 2.

Run as ``python paging_backend.py LOG MODE [DIR]``. It speaks JSON-RPC over stdio by
hand so that a test controls every page: ``ok`` answers them all, ``fail`` answers
page 2 of any list with an error, ``hang`` never answers page 2, ``slow`` answers it
after a second, ``lie`` answers every list with the error a policy's block has (a
backend that would pass its failure off as the gateway's verdict). ``fs`` is a
file reader that behaves as the npm ``server-filesystem`` does with roots: it asks
a client that declares roots for them, and otherwise (or when asking fails) serves
DIR, the directory it was started with; ``fs-lazy`` asks only when the first call
comes, and answers that call once the roots are in (a request the client gets on
that call's own stream, so no race with the client opening its stream for
requests from the server); ``fs-eager`` asks right after the handshake as ``fs``
does and records that it asked (``{"asked": "roots/list"}``), for a test that
opens the client's stream only then. Every page it is asked for, every call, get
and read it runs, and every roots answer it gets, is appended to LOG as a JSON line.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

LOG = Path(sys.argv[1])
MODE = sys.argv[2] if len(sys.argv) > 2 else "ok"
ALLOWED = [Path(sys.argv[3]).resolve()] if len(sys.argv) > 3 else []

PAGES: dict[str, tuple[str, list[dict[str, Any]]]] = {
    "tools/list": (
        "tools",
        [
            {"name": "echo", "inputSchema": {"type": "object"}},
            {"name": "debug_dump", "inputSchema": {"type": "object"}},
        ],
    ),
    "prompts/list": ("prompts", [{"name": "greeting"}, {"name": "internal_prompt"}]),
    "resources/list": (
        "resources",
        [{"uri": "memo://public", "name": "public"}, {"uri": "secret://keys", "name": "keys"}],
    ),
    "resources/templates/list": (
        "resourceTemplates",
        [{"uriTemplate": "note://{id}", "name": "note"}],
    ),
}
FS_TOOLS = {"tools": [{"name": "read_file", "inputSchema": {"type": "object"}}]}


def record(entry: dict[str, Any]) -> None:
    with LOG.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(entry) + "\n")


def write(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def page(method: str, params: dict[str, Any]) -> dict[str, Any] | None:
    """One element a page; ``None`` where the mode says page 2 does not come."""
    key, items = PAGES[method]
    index = int(params.get("cursor") or 0)
    record({"list": method, "page": index + 1})
    if index > 0 and MODE == "hang":
        return None
    if index > 0 and MODE == "slow":
        time.sleep(1)  # every request sent meanwhile waits in the pipe
    if index > 0 and MODE == "fail":
        return {"error": {"code": -32603, "message": "page store unavailable"}}
    result: dict[str, Any] = {key: items[index : index + 1]}
    if index + 1 < len(items):
        result["nextCursor"] = str(index + 1)
    return {"result": result}


def read_file(path: str) -> dict[str, Any]:
    target = Path(path).resolve()
    if not any(target.is_relative_to(root) for root in ALLOWED):
        return {"content": [{"type": "text", "text": "access denied"}], "isError": True}
    return {"content": [{"type": "text", "text": target.read_text()}]}


def answer(method: str, params: dict[str, Any]) -> dict[str, Any] | None:
    if method == "initialize":
        if MODE.startswith("fs") and "roots" in (params.get("capabilities") or {}):
            ASKS_ROOTS.append(True)
        result = {
            "protocolVersion": params.get("protocolVersion"),
            "capabilities": {"tools": {}, "prompts": {}, "resources": {}},
            "serverInfo": {"name": f"paging-{MODE}", "version": "0"},
        }
        return {"result": result}
    if method == "ping":
        return {"result": {}}
    if MODE.startswith("fs") and method == "tools/list":
        return {"result": FS_TOOLS}
    if method in PAGES and MODE == "lie":
        record({"list": method, "page": 1})
        item = {"interceptor": "liar", "severity": "error", "message": "the policy says no"}
        error = {"code": -32602, "message": "Interceptor validation failed"}
        return {"error": {**error, "data": {"validationErrors": [item]}}}
    if method in PAGES:
        return page(method, params)
    if method == "tools/call":
        record({"call": params.get("name"), "arguments": params.get("arguments")})
        if MODE.startswith("fs"):
            return {"result": read_file(str((params.get("arguments") or {}).get("path")))}
        return {"result": {"content": [{"type": "text", "text": f"ran {params.get('name')}"}]}}
    if method == "prompts/get":
        record({"get": params.get("name")})
        text = {"type": "text", "text": f"prompt {params.get('name')}"}
        return {"result": {"messages": [{"role": "user", "content": text}]}}
    if method == "resources/read":
        record({"read": params.get("uri")})
        return {"result": {"contents": [{"uri": params.get("uri"), "text": "contents"}]}}
    return {"error": {"code": -32601, "message": "Method not found"}}


ASKS_ROOTS: list[bool] = []

WAITING: list[dict[str, Any]] = []  # fs-lazy: calls held until the roots are in
ROOTS_ASKED: list[bool] = []


def serve(message: dict[str, Any]) -> None:
    reply = answer(message["method"], message.get("params") or {})
    if reply is not None:
        write({"id": message["id"], **reply})


for line in sys.stdin:
    message = json.loads(line)
    method = message.get("method")
    if method is None:  # the answer to our roots/list
        roots = (message.get("result") or {}).get("roots") or []
        if roots:  # as server-filesystem: no roots, or an error, keeps DIR
            ALLOWED = [Path(root["uri"].removeprefix("file://")).resolve() for root in roots]
        record({"roots": message.get("result", {}).get("roots"), "error": "error" in message})
        for held in WAITING:
            serve(held)
        WAITING.clear()
        continue
    if method == "notifications/initialized" and ASKS_ROOTS and MODE in ("fs", "fs-eager"):
        write({"id": "roots-1", "method": "roots/list"})
        if MODE == "fs-eager":
            record({"asked": "roots/list"})
        continue
    if "id" not in message:
        continue
    if MODE == "fs-lazy" and method == "tools/call" and ASKS_ROOTS and not ROOTS_ASKED:
        ROOTS_ASKED.append(True)
        WAITING.append(message)
        write({"id": "roots-1", "method": "roots/list"})
        continue
    if WAITING:
        WAITING.append(message)
        continue
    serve(message)

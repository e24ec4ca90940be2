"""A minimal SEP-2624 interceptor server written with nothing but the MCP SDK.

It stands in for "anyone's" interceptor server in the chain tests: it does not
import policyc, so the chain is exercised against an independent peer.

Each ``--interceptor`` flag is one JSON object: the SEP descriptor fields
(``name``, ``type``, ``hooks`` or ``events`` + ``phases``, ``mode``,
``failOpen``, ``priorityHint``) plus ``behavior`` and optional ``tag``:

- ``allow``   validator, always valid
- ``deny``    validator, ``valid: false``, severity ``error``
- ``deny-nosev`` validator, ``valid: false`` with no severity
- ``warn``    validator, ``valid: false``, severity ``warn``
- ``append``  mutator, appends ``tag`` to ``payload["trail"]``
- ``record``  validator, valid; reports what it saw (trail, config, context) in ``info``
- ``error``   answers with a JSON-RPC error (-32603, structured data)
- ``exit``    kills the whole server process mid-request
- ``slow``    never answers; counts its own cancellation
- ``cancel-probe`` validator that waits until a ``slow`` handler was cancelled
- ``raw``     answers with the spec's ``result`` object as it is (off-schema results)

Every result carries ``info.server`` and ``info.pid`` so tests can tell which
process answered. With ``--minimal-results`` results leave out ``interceptor``,
``type`` and ``phase``, as the SEP's own invoke examples do.

``--interceptors-file PATH`` adds the specs in a JSON list read at start-up,
so a test can restart the server with other descriptors.

Transport: stdio by default; ``--http PORT`` serves streamable HTTP on
127.0.0.1 (port 0 picks one) and prints ``READY <port>`` once listening.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
from typing import Any

import anyio
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ConfigDict


class _AnyParams(BaseModel):
    model_config = ConfigDict(extra="allow")


def _hooks(spec: dict[str, Any]) -> list[dict[str, Any]]:
    if "hooks" in spec:
        return list(spec["hooks"])
    phases = spec.get("phases", "both")
    names = ["request", "response"] if phases == "both" else [phases]
    return [{"events": list(spec["events"]), "phase": phase} for phase in names]


def _descriptor(spec: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": spec["name"], "type": spec["type"], "hooks": _hooks(spec)}
    for key in ("mode", "failOpen", "priorityHint"):
        if key in spec:
            out[key] = spec[key]
    return out


def _matches(hook_event: str, event: str) -> bool:
    if hook_event in ("*", event):
        return True
    return hook_event.endswith("/*") and event.startswith(hook_event[:-1])


class BareInterceptorServer:
    def __init__(self, name: str, specs: list[dict[str, Any]], minimal: bool) -> None:
        self.name = name
        self.specs = {spec["name"]: spec for spec in specs}
        self.order = [spec["name"] for spec in specs]
        self.minimal = minimal
        self.cancelled = anyio.Event()
        self.cancel_count = 0

    def build(self) -> Server[Any]:
        server: Server[Any] = Server(self.name)
        server.add_request_handler("interceptors/list", _AnyParams, self.list)
        server.add_request_handler("interceptor/invoke", _AnyParams, self.invoke)
        return server

    async def list(self, ctx: Any, params: _AnyParams) -> dict[str, Any]:
        event = (params.model_extra or {}).get("event")
        found = []
        for name in self.order:
            descriptor = _descriptor(self.specs[name])
            if event is None or any(
                _matches(e, event) for hook in descriptor["hooks"] for e in hook["events"]
            ):
                found.append(descriptor)
        return {"interceptors": found}

    async def invoke(self, ctx: Any, params: _AnyParams) -> dict[str, Any]:
        raw = dict(params.model_extra or {})
        name = raw.get("name")
        spec = self.specs.get(name) if isinstance(name, str) else None
        if spec is None:
            raise MCPError(-32602, f"Unknown interceptor: {name}", {"interceptor": name})
        body = await self._behave(spec, raw)
        info = {"server": self.name, "pid": os.getpid(), **body.pop("info", {})}
        request = getattr(ctx, "request", None)
        if request is not None and hasattr(request, "headers"):
            info["authorization"] = request.headers.get("authorization")
        head = {} if self.minimal else {"interceptor": name, "type": spec["type"]}
        if not self.minimal:
            head["phase"] = raw["phase"]
        return {**head, **body, "info": info}

    async def _behave(self, spec: dict[str, Any], raw: dict[str, Any]) -> dict[str, Any]:
        behavior = spec["behavior"]
        payload = raw.get("payload")
        if behavior == "allow":
            return {"valid": True}
        if behavior == "raw":
            return dict(spec["result"])
        if behavior == "deny":
            message = {"message": f"denied by {spec['name']}", "severity": "error"}
            return {"valid": False, "severity": "error", "messages": [message]}
        if behavior == "deny-nosev":
            return {"valid": False}
        if behavior == "warn":
            return {"valid": False, "severity": "warn"}
        if behavior == "append":
            trail = list(payload.get("trail", [])) if isinstance(payload, dict) else []
            changed = {
                **(payload if isinstance(payload, dict) else {}),
                "trail": [*trail, spec["tag"]],
            }
            return {"modified": True, "payload": changed}
        if behavior == "record":
            seen = {
                "trail": payload.get("trail") if isinstance(payload, dict) else None,
                "config": raw.get("config"),
                "context": raw.get("context"),
                "timeoutMs": raw.get("timeoutMs"),
            }
            return {"valid": True, "info": {"seen": seen}}
        if behavior == "error":
            data = {"interceptor": spec["name"], "reason": "deliberate failure"}
            raise MCPError(-32603, "Interceptor execution failed", data)
        if behavior == "exit":
            os._exit(3)
        if behavior == "slow":
            try:
                await anyio.sleep_forever()
            finally:
                self.cancel_count += 1
                self.cancelled.set()
        if behavior == "cancel-probe":
            with anyio.fail_after(10):
                await self.cancelled.wait()
            return {"valid": True, "info": {"cancelled": self.cancel_count}}
        raise MCPError(-32603, f"unknown behavior {behavior}")


async def _serve_stdio(server: Server[Any]) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def _serve_http(server: Server[Any], port: int) -> None:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    print(f"READY {sock.getsockname()[1]}", flush=True)
    app = server.streamable_http_app()
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="bare")
    parser.add_argument("--interceptor", action="append", default=[], type=json.loads)
    parser.add_argument("--minimal-results", action="store_true")
    parser.add_argument("--http", type=int, default=None, metavar="PORT")
    parser.add_argument("--interceptors-file", default=None, metavar="PATH")
    args = parser.parse_args()
    specs = list(args.interceptor)
    if args.interceptors_file is not None:
        with open(args.interceptors_file, encoding="utf-8") as handle:
            specs += json.load(handle)
    bare = BareInterceptorServer(args.name, specs, args.minimal_results)
    server = bare.build()
    if args.http is None:
        anyio.run(_serve_stdio, server)
    else:
        anyio.run(_serve_http, server, args.http)


if __name__ == "__main__":
    sys.exit(main())

"""What one `interceptor/invoke` costs on the wire path, stage by stage, without a socket.

    python bench/bench_wire.py            # prints a table, writes bench/results/wire.json
    python bench/bench_wire.py --quick

A 10 KB `tools/call` request for `tool-guard` (the shipped set), as the bytes
of one JSON-RPC line, goes through the stages the stdio fast lane runs:
parsing the line (`wire.json_text.loads`, pydantic-core's parser), validating
it as an MCP message (`mcp_types.jsonrpc_message_adapter`), validating the
invoke params (`InvokeParams`), evaluating, converting the result to wire
form and encoding the response line. Each stage is timed on its own input
(made fresh per call where it is an object) beside the whole path, so the
shares add up. Not a test: no figure is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

import mcp_types
from _common import (
    FreshPayloads,
    fmt_ns,
    machine,
    measure,
    print_machine,
    print_table,
    write_results,
)
from bench_invoke import tools_call_request

from policy_engine.compiler import compile_policies
from policy_engine.server import static_source
from policy_engine.server.fastpath import encode_line
from policy_engine.server.service import InterceptorService
from policy_engine.wire import InvokeParams
from policy_engine.wire.json_text import loads

POLICIES = Path(__file__).resolve().parent.parent / "policies"


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--quick", action="store_true")
    options.add_argument("--json")
    args = options.parse_args()
    info = machine()
    print_machine(info)
    policy = compile_policies([POLICIES])
    service = InterceptorService(static_source(policy))
    params = {
        "name": "tool-guard",
        "event": "tools/call",
        "phase": "request",
        "payload": tools_call_request(10_000),
    }
    message = {"jsonrpc": "2.0", "id": 7, "method": "interceptor/invoke", "params": params}
    line = json.dumps(message).encode()
    document = loads(line)
    documents = FreshPayloads(document, 64)
    raw_params = FreshPayloads(params, 64)
    loop = asyncio.new_event_loop()
    result = policy.invoke_sync("tool-guard", "tools/call", "request", params["payload"])
    wire = result.to_wire()
    payloads = FreshPayloads(params["payload"], 64)

    def whole() -> object:
        parsed = mcp_types.jsonrpc_message_adapter.validate_python(loads(line), by_name=False)
        answer = loop.run_until_complete(service.invoke(parsed.params))  # type: ignore[union-attr]
        return encode_line({"jsonrpc": "2.0", "id": 7, "result": answer})

    stages: dict[str, Any] = {
        "parse the line (json_text.loads)": lambda: loads(line),
        "validate as an MCP message": lambda: mcp_types.jsonrpc_message_adapter.validate_python(
            documents(), by_name=False
        ),
        "validate InvokeParams": lambda: InvokeParams.model_validate(raw_params()),
        "evaluate (invoke_sync)": lambda: policy.invoke_sync(
            "tool-guard", "tools/call", "request", payloads()
        ),
        "result to wire form": result.to_wire,
        "encode the response line": lambda: encode_line(
            {"jsonrpc": "2.0", "id": 7, "result": wire}
        ),
        "whole path (service.invoke, no socket)": whole,
    }
    stats = measure(stages, budget_s=0.3 if args.quick else 1.5)
    total = stats["whole path (service.invoke, no socket)"].median_ns
    rows = [[name, fmt_ns(s.median_ns), f"{s.median_ns / total:.0%}"] for name, s in stats.items()]
    print(f"## One 10 KB invoke line ({len(line):,} bytes), stage by stage\n")
    print_table(["stage", "median", "share of the whole"], rows)
    loop.close()
    out = {"line_bytes": len(line), "stages": {k: v.to_json() for k, v in stats.items()}}
    path = write_results("wire", {"machine": info, **out}, args.json)
    print(f"results written to {path}")


if __name__ == "__main__":
    main()

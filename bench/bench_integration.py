"""``tools/call`` on an MCPServer with the shipped policies installed, against the same server
without policies, measured in the same run and interleaved round by round.

A third server has the middleware installed with a policy that hooks no
``tools/call`` (the host's own cost, no chain run). All are driven by the SDK's
client in-process (no transport), so the ratios are the middleware's and the
chain's own cost, with nothing to hide them. Each call sends a fresh ``text``
argument of PII-dense prose (``bench/_payloads.py``; 1 KB, 10 KB and 100 KB,
``--sizes``) that the policies inspect and the redactor rewrites, so nothing is
cached and the redactor has work on every call.

The client speaks the handshake era (``mode="legacy"``, one connection for the
whole run) or the 2026-07-28 protocol (``--mode auto``: a connection per request,
so a policy that filters ``tools/list`` makes the host list before every call).

    python bench/bench_integration.py            # full run
    python bench/bench_integration.py --quick    # fewer calls
    python bench/bench_integration.py --sizes 10KB --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import anyio
from mcp import Client
from mcp.server.mcpserver import MCPServer

from policy_engine.compiler import compile_policies, compile_sources
from policy_engine.integrations import install_policies

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine
from _payloads import SIZES, describe, pii_text

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted(p for p in (ROOT / "policies").glob("*.policy") if not p.stem.endswith("_test"))


UNHOOKED = {
    "unhooked.policy": 'validator unhooked "hooks no tools/call" {\n'
    '  on prompts/get request\n  deny if $.name == "x" "no"\n}\n'
}


def build(policies: str) -> MCPServer:
    server = MCPServer("bench")

    @server.tool()
    def store(text: str, note: str) -> str:
        """Store a document."""
        return f"stored {len(text)} bytes"

    if policies == "shipped":
        install_policies(server, compile_policies(SHIPPED))
    elif policies == "unhooked":
        install_policies(server, compile_sources(UNHOOKED))
    return server


def payload(i: int, size: int = SIZES["10KB"]) -> dict[str, str]:
    return {"text": pii_text(i, size), "note": f"call {i}"}


async def main(rounds: int, per_round: int, size: int, mode: str) -> dict[str, float]:
    timings: dict[str, list[float]] = {"plain": [], "unhooked": [], "policies": []}
    async with (
        Client(build("none"), mode=mode) as plain,
        Client(build("unhooked"), mode=mode) as unhooked,
        Client(build("shipped"), mode=mode) as guarded,
    ):
        clients = {"plain": plain, "unhooked": unhooked, "policies": guarded}
        for client in clients.values():  # warm up
            for i in range(20):
                await client.call_tool("store", payload(i, size))
        for r in range(rounds):
            for name, client in clients.items():
                for i in range(per_round):
                    arguments = payload(r * per_round + i, size)
                    start = time.perf_counter()
                    await client.call_tool("store", arguments)
                    timings[name].append((time.perf_counter() - start) * 1000)
    medians = {name: statistics.median(values) for name, values in timings.items()}
    return {
        **medians,
        "middleware_ratio": medians["unhooked"] / medians["plain"],
        "policies_ratio": medians["policies"] / medians["plain"],
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--sizes", default="1KB,10KB,100KB")
    parser.add_argument("--mode", default="legacy", choices=["legacy", "auto"])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rounds, per_round = (5, 20) if args.quick else (20, 50)
    info = machine()
    cases: dict[str, dict[str, float]] = {}
    print(f"bench_integration: MCPServer in process, client mode {args.mode}, ms per call")
    for size in args.sizes.split(","):
        scale = 4 if size == "100KB" else 1
        figures = anyio.run(main, rounds, max(per_round // scale, 5), SIZES[size], args.mode)
        cases[size] = figures
        print(f"{size}: {describe(size)}")
        print("  " + json.dumps({k: round(v, 4) for k, v in figures.items()}))
    load_end = [round(x, 2) for x in os.getloadavg()]
    print(f"load average {info['loadavg_at_start']} -> {load_end}")
    if args.json:
        document = {
            "cases": cases,
            "mode": args.mode,
            "payloads": {size: describe(size) for size in cases},
            "machine": info,
            "loadavg_at_end": load_end,
        }
        args.json.write_text(json.dumps(document, indent=2) + "\n")

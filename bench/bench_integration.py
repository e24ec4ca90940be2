"""``tools/call`` on an MCPServer with the shipped policies installed, against the same server
without policies, measured in the same run and interleaved round by round.

A third server has the middleware installed with a policy that hooks no
``tools/call`` (the host's own cost, no chain run). All are driven by the SDK's
client in-process (no transport), so the ratios are the middleware's and the
chain's own cost, with nothing to hide them. Each call sends fresh ~10 KB arguments that
the policies inspect (and the redactor scans), so nothing is cached.

    python bench/bench_integration.py            # full run
    python bench/bench_integration.py --quick    # fewer calls
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import anyio
from mcp import Client
from mcp.server.mcpserver import MCPServer

from policy_engine.compiler import compile_policies, compile_sources
from policy_engine.integrations import install_policies

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted(p for p in (ROOT / "policies").glob("*.policy") if p.stem != "policies_test")


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


def payload(i: int) -> dict[str, str]:
    words = " ".join(f"word{i}-{n} lorem ipsum dolor" for n in range(380))
    return {"text": words[:10_000], "note": f"call {i}"}


async def main(rounds: int, per_round: int) -> dict[str, float]:
    timings: dict[str, list[float]] = {"plain": [], "unhooked": [], "policies": []}
    async with (
        Client(build("none")) as plain,
        Client(build("unhooked")) as unhooked,
        Client(build("shipped")) as guarded,
    ):
        clients = {"plain": plain, "unhooked": unhooked, "policies": guarded}
        for client in clients.values():  # warm up
            for i in range(20):
                await client.call_tool("store", payload(i))
        for r in range(rounds):
            for name, client in clients.items():
                for i in range(per_round):
                    arguments = payload(r * per_round + i)
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
    args = parser.parse_args()
    rounds, per_round = (5, 20) if args.quick else (20, 50)
    figures = anyio.run(main, rounds, per_round)
    print(json.dumps({k: round(v, 4) for k, v in figures.items()}))

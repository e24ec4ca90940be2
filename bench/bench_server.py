"""Invoke round trip and throughput of the policyc server, against a no-op baseline.

Every figure is measured twice in the same run: once against policyc serving a
compiled policy (the shipped ``policies/tool-guard.policy``: tool allow and deny
lists and a size limit, which encodes the whole payload), once against a bare
SDK server whose ``interceptor/invoke`` handler returns a constant, on the same
transport. The ratio between the two is policyc's own per-invoke cost, the
policy's evaluation included. Every invoke carries a fresh ``tools/call``
payload whose ``text`` argument is PII-dense prose (``bench/_payloads.py``;
``--size`` 1KB, 10KB or 100KB, 10KB by default). Clients are raw JSON-RPC
(pipes, or HTTP posts) so the client side costs the same for both.

    python bench/bench_server.py               # full run, prints a table
    python bench/bench_server.py --quick       # smaller counts
    python bench/bench_server.py --size 1KB --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _payloads import SIZES, describe, pii_text

POLICY = Path(__file__).resolve().parents[1] / "policies" / "tool-guard.policy"
SIZE = SIZES["10KB"]
"""The ``text`` argument's length (``--size``)."""


def _invoke_params(i: int) -> dict[str, Any]:
    return {
        "name": "tool-guard",
        "event": "tools/call",
        "phase": "request",
        "payload": {"name": "crm_update", "arguments": {"text": pii_text(i, SIZE)}},
    }


INIT_PARAMS = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "bench", "version": "0"},
}


# --------------------------------------------------------------------------- servers


def _policy_source() -> Any:
    from policy_engine.compiler import compile_policies
    from policy_engine.server import static_source

    return static_source(compile_policies([POLICY]))


def _policyc_server() -> Any:
    from policy_engine.server import build_server

    return build_server(_policy_source())


def _noop_server() -> Any:
    from mcp.server.lowlevel.server import Server
    from mcp_types import RequestParams
    from pydantic import ConfigDict

    class Loose(RequestParams):
        model_config = ConfigDict(extra="allow")

    result = {"interceptor": "tool-guard", "type": "validation", "phase": "request", "valid": True}

    async def invoke(ctx: Any, params: Loose) -> dict[str, Any]:
        return result

    server: Server[Any] = Server("noop")
    server.add_request_handler("interceptor/invoke", Loose, invoke)
    return server


def serve(impl: str, transport: str) -> None:
    server = _policyc_server() if impl == "policyc" else _noop_server()

    async def run() -> None:
        if transport == "stdio-fast":
            from policy_engine.server import serve_stdio

            await serve_stdio(_policy_source())
            return
        if transport == "http":
            import uvicorn

            from policy_engine.server.http_app import (
                _AnnouncingServer,
                _bind,
                build_http_app,
                security_settings,
            )

            # policyc: the whole `policyc serve --http` stack (auth-free on loopback: the
            # request guard, the session limiter, the SDK); the no-op: the SDK's app alone.
            app = (
                build_http_app(_policy_source(), host="127.0.0.1")
                if impl == "policyc"
                else server.streamable_http_app(
                    json_response=True, transport_security=security_settings("127.0.0.1")
                )
            )
            sock = _bind("127.0.0.1", 0)
            port = sock.getsockname()[1]
            config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")

            def ready() -> None:
                print(f"READY {port}", flush=True)

            await _AnnouncingServer(config, ready).serve(sockets=[sock])
            return
        if transport == "stdio-ours":
            from policy_engine.server.stdio import stdio_transport as streams
        else:
            from mcp.server.stdio import stdio_server as streams
        async with streams() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(run)


# --------------------------------------------------------------------------- clients


@dataclass
class Figures:
    impl: str
    transport: str
    median_ms: float
    p99_ms: float
    throughput: float
    in_flight: int
    cpu_us: float
    """Server CPU per invoke in the windowed run: steadier than wall time on a busy machine."""
    burst: float = 0.0
    """Invokes per second when all of them are written before any answer is read (stdio)."""


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _request(request_id: int, method: str = "interceptor/invoke") -> dict[str, Any]:
    params = _invoke_params(request_id) if method == "interceptor/invoke" else INIT_PARAMS
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


class PipeClient:
    def __init__(self, process: anyio.abc.Process) -> None:
        self.process = process
        self.buffer = b""

    async def send(self, messages: list[dict[str, Any]]) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(b"".join(json.dumps(m).encode() + b"\n" for m in messages))

    async def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        while b"\n" not in self.buffer:
            self.buffer += await self.process.stdout.receive()
        line, _, self.buffer = self.buffer.partition(b"\n")
        reply: dict[str, Any] = json.loads(line)
        if "error" in reply:
            raise RuntimeError(f"server error: {reply['error']}")
        return reply


async def _round_trips(one: Callable[[int], Awaitable[None]], rounds: int) -> tuple[float, float]:
    """Median and 99th percentile, in ms, of ``rounds`` sequential calls."""
    samples = []
    for i in range(rounds):
        start = time.perf_counter()
        await one(i)
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples), sorted(samples)[int(len(samples) * 0.99) - 1]


async def bench_stdio(impl: str, transport: str, rounds: int, total: int, window: int) -> Figures:
    command = [sys.executable, __file__, "--serve", impl, "--transport", transport]
    async with await anyio.open_process(command, stderr=subprocess.DEVNULL) as process:
        client = PipeClient(process)
        await client.send([_request(0, "initialize")])
        await client.receive()
        await client.send([{"jsonrpc": "2.0", "method": "notifications/initialized"}])

        async def one(i: int) -> None:
            await client.send([_request(i + 1)])
            await client.receive()

        for i in range(200):  # warm up
            await one(i)
        median, p99 = await _round_trips(one, rounds)

        cpu_before = _cpu_seconds(process.pid)
        start = time.perf_counter()
        sent = received = 0
        await client.send([_request(10_000 + k) for k in range(min(window, total))])
        sent = min(window, total)
        while received < total:
            await client.receive()
            received += 1
            if sent < total:
                await client.send([_request(10_000 + sent)])
                sent += 1
        throughput = total / (time.perf_counter() - start)
        cpu_us = (_cpu_seconds(process.pid) - cpu_before) / total * 1e6

        start = time.perf_counter()
        # Written from its own task: the server stops reading while its answers
        # go unread (stdio backpressure), so writing all before reading would stall.
        async with anyio.create_task_group() as writer:
            writer.start_soon(client.send, [_request(100_000 + k) for k in range(total)])
            for _ in range(total):
                await client.receive()
        burst = total / (time.perf_counter() - start)
        assert process.stdin is not None
        await process.stdin.aclose()
        await process.wait()
    return Figures(impl, transport, median, p99, throughput, window, cpu_us, burst)


def _start_http(impl: str) -> tuple[subprocess.Popen[str], int]:
    process = subprocess.Popen(
        [sys.executable, __file__, "--serve", impl, "--transport", "http"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    return process, int(line.split()[1])


async def _http_session(http: httpx2.AsyncClient, url: str) -> dict[str, str]:
    headers = {"accept": "application/json, text/event-stream"}
    reply = await http.post(url, json=_request(0, "initialize"), headers=headers)
    headers["mcp-session-id"] = reply.headers["mcp-session-id"]
    headers["mcp-protocol-version"] = "2025-11-25"
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    await http.post(url, json=note, headers=headers)
    return headers


async def bench_http(
    impl: str, rounds: int, clients: int, per_client: int
) -> tuple[Figures, dict[str, Any]]:
    process, port = _start_http(impl)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        limits = httpx2.Limits(max_connections=clients + 4)
        async with httpx2.AsyncClient(timeout=60, limits=limits) as http:
            headers = await _http_session(http, url)

            async def one(i: int) -> None:
                reply = await http.post(url, json=_request(i + 1), headers=headers)
                assert reply.status_code == 200 and "result" in reply.json(), reply.text

            for i in range(100):
                await one(i)
            median, p99 = await _round_trips(one, rounds)

            answered = 0

            async def client_run() -> None:
                nonlocal answered
                own = await _http_session(http, url)
                for i in range(per_client):
                    reply = await http.post(url, json=_request(i + 1), headers=own)
                    body = reply.json()
                    assert body["id"] == i + 1 and body["result"]["valid"] is True, body
                    answered += 1

            cpu_before = _cpu_seconds(process.pid)
            start = time.perf_counter()
            async with anyio.create_task_group() as tg:
                for _ in range(clients):
                    tg.start_soon(client_run)
            elapsed = time.perf_counter() - start
            cpu_us = (_cpu_seconds(process.pid) - cpu_before) / max(answered, 1) * 1e6
        load = {"impl": impl, "clients": clients, "perClient": per_client, "answered": answered}
        figures = Figures(impl, "http", median, p99, answered / elapsed, clients, cpu_us)
        return figures, load
    finally:
        process.terminate()
        process.wait(timeout=10)


# --------------------------------------------------------------------------- report

STDIO_RUNS = [
    ("noop", "stdio-sdk"),
    ("policyc", "stdio-sdk"),
    ("noop", "stdio-ours"),
    ("policyc", "stdio-ours"),
    ("policyc", "stdio-fast"),
]


def _ratio_rows(figures: list[Figures]) -> list[str]:
    rows = []
    by_key = {(f.impl, f.transport): f for f in figures}
    for transport in dict.fromkeys(f.transport for f in figures):
        ours, base = by_key.get(("policyc", transport)), by_key.get(("noop", transport))
        if ours and base:
            rows.append(
                f"{transport:<11} policyc/no-op: median {ours.median_ms / base.median_ms:5.2f}  "
                f"throughput {ours.throughput / base.throughput:5.2f}  "
                f"cpu per invoke {ours.cpu_us / base.cpu_us:5.2f}"
            )
    sdk, fast = by_key.get(("noop", "stdio-sdk")), by_key.get(("policyc", "stdio-fast"))
    if sdk and fast:
        rows.append(
            f"{'stdio-fast':<11} vs no-op on the stock SDK stdio: "
            f"median {fast.median_ms / sdk.median_ms:5.2f}  "
            f"throughput {fast.throughput / sdk.throughput:5.2f}  "
            f"cpu per invoke {fast.cpu_us / sdk.cpu_us:5.2f}"
        )
    return rows


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    rounds = 300 if args.quick else 2000
    total = 2000 if args.quick else 10_000
    # 16 clients: the load the issue-13 target names (1 client is the median).
    clients, per_client = (16, 20) if args.quick else (16, 300)
    figures: list[Figures] = []
    for impl, transport in STDIO_RUNS:
        figures.append(await bench_stdio(impl, transport, rounds, total, args.window))
    loads = []
    for impl in ("noop", "policyc"):
        result, load = await bench_http(impl, rounds // 2, clients, per_client)
        figures.append(result)
        loads.append(load)
    return {"figures": [asdict(f) for f in figures], "httpLoad": loads, "cpus": os.cpu_count()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--serve", choices=["policyc", "noop"])
    parser.add_argument("--transport", default="stdio-ours")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--window", type=int, default=16, help="requests in flight (stdio)")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--size", choices=list(SIZES), default="10KB")
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.transport)
        return
    global SIZE
    SIZE = SIZES[args.size]
    from _common import machine

    info = machine()
    report = {**anyio.run(main_async, args), "payload": describe(args.size), "machine": info}
    report["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    print(f"bench_server: policyc serves {POLICY.name}; payload: {report['payload']}")
    print(
        f"{'server':<8} {'transport':<11} {'median ms':>10} {'p99 ms':>8} "
        f"{'invokes/s':>10} {'cpu us':>7} {'burst/s':>8}"
    )
    figures = [Figures(**f) for f in report["figures"]]
    for f in figures:
        print(
            f"{f.impl:<8} {f.transport:<11} {f.median_ms:10.3f} {f.p99_ms:8.3f} "
            f"{f.throughput:10.0f} {f.cpu_us:7.0f} {f.burst:8.0f}  ({f.in_flight} in flight)"
        )
    print("\n".join(_ratio_rows(figures)))
    for load in report["httpLoad"]:
        expected = load["clients"] * load["perClient"]
        print(f"http load {load['impl']}: {load['answered']} of {expected} invokes answered")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(report, out, indent=2)


if __name__ == "__main__":
    main()

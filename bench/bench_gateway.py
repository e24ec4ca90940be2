"""``tools/call`` through the gateway, against the same backend called directly.

Three contenders per transport, measured in one run and interleaved round by
round: the backend called directly; through ``policyc gateway`` with no
policies (pass-through); through the gateway with the shipped policies
(policies/*.policy). Each call sends a freshly encoded request with a ~1 KB
``text`` argument of PII-dense prose (``bench/_payloads.py``: 1 KB, 10 KB and
100 KB, ``--sizes``) that the policies inspect and the redactor rewrites, so
nothing is cached between calls and the redactor has work on every call. Besides
the wall time per call, each gateway's own CPU time per call is reported (from
/proc, the gateway process alone, not its backend): on a busy machine it is the
steadier figure.

- stdio: a raw JSON-RPC pipe client, 1 request in flight, or 16 in flight at
  once on the one connection (a stdio server has one client).
- HTTP: the Python SDK client over streamable HTTP to the backend (direct) or
  to ``gateway --http`` whose backend is the same server over HTTP; 1 client,
  or 16 clients each with its own session, concurrently.
- Sessionless fronts (``--stateless`` only): the pass-through gateway over HTTP
  with a session per client (2025-11-25), ``--stateless`` (2025-11-25, each
  request answered on its own through shared backend connections), and
  2026-07-28 requests (sessionless by protocol), against the same HTTP backend.

    python bench/bench_gateway.py            # full run
    python bench/bench_gateway.py --quick    # fewer calls
    python bench/bench_gateway.py --json out.json
    python bench/bench_gateway.py --sizes 10KB --only stdio
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _payloads import SIZES, describe, pii_text

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted(p for p in (ROOT / "policies").glob("*.policy") if not p.stem.endswith("_test"))
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "bench", "version": "0"},
}


# --------------------------------------------------------------------------- the backend


def serve_backend(transport: str, port: int) -> None:
    """A lean backend (the SDK's low-level server): its own cost stays small, so the
    gateway's shows."""
    import mcp_types as types
    from mcp.server.lowlevel.server import Server

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        schema = {"type": "object", "properties": {"text": {"type": "string"}}}
        return types.ListToolsResult(tools=[types.Tool(name="echo", input_schema=schema)])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        text = str((params.arguments or {}).get("text", ""))
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    server: Server[Any] = Server("bench-backend", on_list_tools=list_tools, on_call_tool=call_tool)

    async def run() -> None:
        if transport == "stdio":
            from policy_engine.server.stdio import stdio_transport

            async with stdio_transport() as (read, write):
                await server.run(read, write, server.create_initialization_options())
            return
        import uvicorn

        from policy_engine.server.http_app import _bind, security_settings

        app = server.streamable_http_app(
            json_response=True, transport_security=security_settings("127.0.0.1")
        )
        sock = _bind("127.0.0.1", port)
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
        await uvicorn.Server(config).serve(sockets=[sock])

    anyio.run(run)


def backend_argv(transport: str, port: int = 0) -> list[str]:
    return [sys.executable, __file__, "--serve-backend", transport, "--port", str(port)]


def gateway_argv(policies: list[Path], backend: str, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "policy_engine.cli.main",
        "gateway",
        *map(str, policies),
        "--backend",
        backend,
        *extra,
    ]


SIZE = SIZES["10KB"]
"""The ``text`` argument's length for this run (``--sizes`` sets it per pass)."""


def _text(i: int) -> str:
    # Fresh per call, PII-dense: the redactors have work on every call (bench/_payloads.py).
    return pii_text(i, SIZE)


# --------------------------------------------------------------------------- stdio


class Pipe:
    """A raw JSON-RPC client over a child's stdin/stdout, matching answers by id."""

    def __init__(self, process: anyio.abc.Process) -> None:
        self.process = process
        self.buffer = b""
        self.waiting: dict[int, anyio.Event] = {}

    async def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(json.dumps(message).encode() + b"\n")

    async def read_one(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        while b"\n" not in self.buffer:
            chunk = await self.process.stdout.receive()
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        reply: dict[str, Any] = json.loads(line)
        return reply

    async def call(self, request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        await self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        reply = await self.read_one()
        if "error" in reply:
            raise RuntimeError(f"error: {reply['error']}")
        return reply


@asynccontextmanager
async def stdio_peer(argv: list[str]) -> AsyncIterator[Pipe]:
    async with await anyio.open_process(argv, stderr=subprocess.DEVNULL, cwd=str(ROOT)) as process:
        pipe = Pipe(process)
        await pipe.call(0, "initialize", INIT)
        await pipe.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        try:
            yield pipe
        finally:
            assert process.stdin is not None
            await process.stdin.aclose()
            with anyio.move_on_after(5):
                await process.wait()


async def stdio_batch(pipe: Pipe, start: int, in_flight: int) -> None:
    """``in_flight`` calls written at once, then all answers read."""
    for i in range(in_flight):
        params = {"name": "echo", "arguments": {"text": _text(start + i)}}
        await pipe.send(
            {"jsonrpc": "2.0", "id": start + i, "method": "tools/call", "params": params}
        )
    for _ in range(in_flight):
        reply = await pipe.read_one()
        if "error" in reply:
            raise RuntimeError(f"error: {reply['error']}")


# --------------------------------------------------------------------------- HTTP


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def wait_port(port: int, limit: float = 60) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            stream = await anyio.connect_tcp("127.0.0.1", port)
            await stream.aclose()
            return
        except OSError:
            await anyio.sleep(0.05)
    raise RuntimeError(f"nothing listens on {port}")


PIDS: dict[str, int] = {}
"""The process behind each URL, for its CPU time."""


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of one process (not its children), from /proc."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@asynccontextmanager
async def http_process(argv: list[str], port: int) -> AsyncIterator[str]:
    async with await anyio.open_process(argv, stderr=subprocess.DEVNULL, cwd=str(ROOT)) as process:
        PIDS[f"http://127.0.0.1:{port}/mcp"] = process.pid
        try:
            await wait_port(port)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            process.terminate()
            with anyio.move_on_after(10):
                await process.wait()


@asynccontextmanager
async def http_clients(url: str, count: int, mode: str = "legacy") -> AsyncIterator[list[Any]]:
    from contextlib import AsyncExitStack

    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with AsyncExitStack() as stack:
        clients = []
        for _ in range(count):
            http = await stack.enter_async_context(httpx2.AsyncClient(timeout=60))
            transport = streamable_http_client(url, http_client=http)
            clients.append(
                await stack.enter_async_context(Client(transport, mode=mode, cache=None))
            )
        yield clients


# --------------------------------------------------------------------------- timing


async def timed(
    batch: Callable[[int], Awaitable[None]], rounds: int, per_batch: int
) -> list[float]:
    """Milliseconds per call for ``rounds`` batches (median over calls in a batch)."""
    samples = []
    for r in range(rounds):
        started = time.perf_counter()
        await batch(r * per_batch)
        samples.append((time.perf_counter() - started) * 1000 / per_batch)
    return samples


async def interleaved(
    contenders: dict[str, Callable[[int], Awaitable[None]]],
    rounds: int,
    per_batch: int,
    slices: int,
    pids: dict[str, int] | None = None,
) -> dict[str, list[float]]:
    """Per-call samples of each contender; with ``pids``, also ``NAME cpu us``: that
    process's CPU time per call over the contender's own rounds."""
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    cpu: dict[str, float] = dict.fromkeys(contenders, 0.0)
    base = 10_000
    for _ in range(slices):
        for name, batch in contenders.items():
            pid = (pids or {}).get(name)
            before = cpu_seconds(pid) if pid else 0.0
            samples[name] += await timed(lambda i, b=batch, o=base: b(o + i), rounds, per_batch)
            if pid:
                cpu[name] += cpu_seconds(pid) - before
            base += rounds * per_batch + 1
    calls = rounds * per_batch * slices
    for name in pids or {}:
        samples[f"{name} cpu us"] = [cpu[name] / calls * 1e6]
    return samples


def median(values: list[float]) -> float:
    return statistics.median(values)


async def bench_stdio(rounds: int, slices: int) -> dict[str, dict[str, float]]:
    backend = backend_argv("stdio")
    target = "b=" + " ".join(backend)
    results: dict[str, dict[str, float]] = {}
    async with (
        stdio_peer(backend) as direct,
        stdio_peer(gateway_argv([], target)) as bare,
        stdio_peer(gateway_argv(SHIPPED, target)) as shipped,
    ):
        pipes = {"direct": direct, "gateway": bare, "gateway+policies": shipped}
        for pipe in pipes.values():  # warm up
            for i in range(100):
                await stdio_batch(pipe, 1_000_000 + i, 1)
        for in_flight in (1, 16):
            contenders = {
                name: (lambda i, p=pipe, n=in_flight: stdio_batch(p, i, n))
                for name, pipe in pipes.items()
            }
            pids = {name: pipe.process.pid for name, pipe in pipes.items()}
            samples = await interleaved(contenders, rounds, in_flight, slices, pids)
            results[f"stdio x{in_flight}"] = {name: median(s) for name, s in samples.items()}
    return results


async def bench_http(rounds: int, slices: int) -> dict[str, dict[str, float]]:
    backend_port, bare_port, shipped_port = free_port(), free_port(), free_port()
    results: dict[str, dict[str, float]] = {}
    async with http_process(backend_argv("http", backend_port), backend_port) as backend_url:
        target = f"b={backend_url}"
        bare = gateway_argv([], target, "--http", f"127.0.0.1:{bare_port}")
        shipped = gateway_argv(SHIPPED, target, "--http", f"127.0.0.1:{shipped_port}")
        async with (
            http_process(bare, bare_port) as bare_url,
            http_process(shipped, shipped_port) as shipped_url,
        ):
            urls = {"direct": backend_url, "gateway": bare_url, "gateway+policies": shipped_url}
            for count in (1, 16):
                async with (
                    http_clients(urls["direct"], count) as direct,
                    http_clients(urls["gateway"], count) as gw,
                    http_clients(urls["gateway+policies"], count) as gwp,
                ):
                    groups = {"direct": direct, "gateway": gw, "gateway+policies": gwp}

                    contenders = {name: _http_batch(c) for name, c in groups.items()}
                    for batch in contenders.values():  # warm up
                        for i in range(20):
                            await batch(2_000_000 + i * count)
                    pids = {name: PIDS[url] for name, url in urls.items()}
                    samples = await interleaved(contenders, rounds, count, slices, pids)
                    results[f"http x{count}"] = {name: median(s) for name, s in samples.items()}
    return results


async def bench_sessionless(rounds: int, slices: int) -> dict[str, dict[str, float]]:
    os.environ.setdefault("FLOW_KEY", "bench-fleet-key-0123456789")
    backend_port, stateful_port, stateless_port = free_port(), free_port(), free_port()
    results: dict[str, dict[str, float]] = {}
    async with http_process(backend_argv("http", backend_port), backend_port) as backend_url:
        target = f"b={backend_url}"
        stateful = gateway_argv([], target, "--http", f"127.0.0.1:{stateful_port}")
        stateless = gateway_argv(
            [], target, "--http", f"127.0.0.1:{stateless_port}", "--stateless",
            "--flow-key-env", "FLOW_KEY",
        )  # fmt: skip
        async with (
            http_process(stateful, stateful_port) as stateful_url,
            http_process(stateless, stateless_port) as stateless_url,
        ):
            for count in (1, 16):
                async with (
                    http_clients(stateful_url, count) as sessions,
                    http_clients(stateless_url, count) as no_sessions,
                    http_clients(stateful_url, count, mode="auto") as modern,
                ):
                    groups = {"session": sessions, "stateless": no_sessions, "2026": modern}
                    contenders = {name: _http_batch(c) for name, c in groups.items()}
                    for batch in contenders.values():  # warm up
                        for i in range(20):
                            await batch(3_000_000 + i * count)
                    samples = await interleaved(contenders, rounds, count, slices)
                    results[f"fronts x{count}"] = {n: median(v) for n, v in samples.items()}
    return results


def report_sessionless(results: dict[str, dict[str, float]]) -> list[str]:
    lines = [
        f"{'case':<10} {'session ms':>11} {'stateless ms':>13} {'2026 ms':>9} "
        f"{'stateless/session':>18} {'2026/session':>13}"
    ]
    for case, row in results.items():
        session, stateless, modern = row["session"], row["stateless"], row["2026"]
        lines.append(
            f"{case:<10} {session:>11.3f} {stateless:>13.3f} {modern:>9.3f} "
            f"{stateless / session:>18.3f} {modern / session:>13.3f}"
        )
    return lines


def _http_batch(clients: list[Any]) -> Callable[[int], Awaitable[None]]:
    """One call on every client at once."""

    async def batch(start: int) -> None:
        async with anyio.create_task_group() as tg:
            for k, client in enumerate(clients):
                tg.start_soon(client.call_tool, "echo", {"text": _text(start + k)})

    return batch


def report(results: dict[str, dict[str, float]]) -> list[str]:
    lines = [
        f"{'case':<16} {'direct ms':>10} {'gateway ms':>11} {'+policies ms':>13} "
        f"{'gw-direct ms':>13} {'policies/gw':>12} {'gw cpu us':>10} {'+pol cpu us':>12}"
    ]
    for case, row in results.items():
        direct, bare, shipped = row["direct"], row["gateway"], row["gateway+policies"]
        lines.append(
            f"{case:<16} {direct:>10.3f} {bare:>11.3f} {shipped:>13.3f} "
            f"{bare - direct:>13.3f} {shipped / bare:>12.3f} "
            f"{row.get('gateway cpu us', 0):>10.0f} {row.get('gateway+policies cpu us', 0):>12.0f}"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--serve-backend", choices=["stdio", "http"])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument(
        "--stateless", action="store_true", help="only the sessionless fronts' comparison"
    )
    parser.add_argument(
        "--sizes", default="1KB,10KB,100KB", help="payload sizes, of " + ",".join(SIZES)
    )
    parser.add_argument("--only", choices=["stdio", "http"], help="one transport only")
    args = parser.parse_args()
    if args.serve_backend:
        serve_backend(args.serve_backend, args.port)
        return
    rounds, slices = (20, 3) if args.quick else (60, 5)
    started = time.monotonic()
    if args.stateless:
        fronts = anyio.run(bench_sessionless, max(rounds // 3, 5), slices)
        print("pass-through gateway over HTTP, per call, medians over interleaved rounds")
        for line in report_sessionless(fronts):
            print(line)
        print(f"({time.monotonic() - started:.0f} s, {os.cpu_count()} cores)")
        if args.json:
            args.json.write_text(json.dumps(fronts, indent=2) + "\n")
        return
    from _common import machine

    info = machine()
    global SIZE
    results: dict[str, dict[str, float]] = {}
    payloads: dict[str, str] = {}
    for size in args.sizes.split(","):
        SIZE = SIZES[size]
        payloads[size] = describe(size)
        # Fewer rounds on bigger payloads: the same order of time per figure.
        scale = {"1KB": 1, "10KB": 1, "100KB": 4}[size]
        if args.only != "http":
            stdio = anyio.run(bench_stdio, max(rounds // scale, 5), slices)
            results.update({f"{case} {size}": row for case, row in stdio.items()})
        if args.only != "stdio":
            http = anyio.run(bench_http, max(rounds // 3 // scale, 5), slices)
            results.update({f"{case} {size}": row for case, row in http.items()})
    print(f"bench_gateway: policies = {', '.join(p.name for p in SHIPPED)}")
    for size, text in payloads.items():
        print(f"payload {size}: {text}")
    print("per call, medians over interleaved rounds (per-call time = batch time / calls)")
    for line in report(results):
        print(line)
    load_end = [round(x, 2) for x in os.getloadavg()]
    elapsed = time.monotonic() - started
    load_start = info["loadavg_at_start"]
    print(f"({elapsed:.0f} s, {os.cpu_count()} cores, load {load_start} -> {load_end})")
    if args.json:
        document = {
            "cases": results,
            "payloads": payloads,
            "machine": info,
            "loadavg_at_end": load_end,
        }
        args.json.write_text(json.dumps(document, indent=2) + "\n")


if __name__ == "__main__":
    main()

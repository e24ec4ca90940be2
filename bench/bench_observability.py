"""The per-request cost of metrics and of tracing, each against neither, in the same run.

Five configurations of each hot path, interleaved round by round in one process:
``neither``, ``metrics`` (the Prometheus hooks), ``tracing`` (OpenTelemetry spans
exported over OTLP/HTTP protobuf to a receiver in a separate process, so only the
exporting side runs here), ``both``, and ``spans`` (the same spans handed to an
exporter that drops them: the SDK's cost without the encoding and the POST). The
hot paths:

- ``gateway``: what the gateway does per ``tools/call`` request: the request span
  (when tracing), the chain run through the shipped policies with a span per
  interceptor, and ``metrics.chain_observer`` (when counting);
- ``serve``: ``InterceptorService.invoke`` of one shipped validator, under its
  ``interceptor/invoke`` span (when tracing) and counting the decision (when counting).

Every call gets a fresh payload (deep copies made before the clock starts), carrying a
client ``traceparent`` in ``_meta``. Reports medians over rounds of wall time and of the
process's CPU time (all threads, the exporter's too) per call, and the load average.

    python bench/bench_observability.py            # about two minutes
    python bench/bench_observability.py --quick    # a few seconds
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio

from policy_engine.compiler import compile_policies
from policy_engine.integrations import local_chain
from policy_engine.interception import Interception
from policy_engine.observability import metrics, tracing
from policy_engine.server import InterceptorService, static_source
from policy_engine.wire.tracecontext import from_meta

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted(p for p in (ROOT / "policies").glob("*.policy") if p.stem != "policies_test")
TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
CALL = {
    "name": "read_file",
    "arguments": {"path": "/srv/docs/readme.md", "note": "x" * 2000},
    "_meta": {"traceparent": TRACEPARENT},
}
CONFIGS = ("neither", "metrics", "spans", "tracing", "both")
TRACED = ("spans", "tracing", "both")

# A collector stand-in: answers every POST /v1/traces with 200 and drops the body.
_RECEIVER = """
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200); self.send_header("content-length", "0"); self.end_headers()
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
"""


def _per_call(started: float, cpu: float, calls: int) -> tuple[float, float]:
    """Wall and CPU microseconds per call. CPU time is this process's, every thread's
    (so the exporter's encoding counts), and is what other load on the machine barely
    disturbs; wall time is what a caller waits."""
    return (
        (time.perf_counter() - started) / calls * 1e6,
        (time.process_time() - cpu) / calls * 1e6,
    )


def _dropping() -> tracing.Tracing:
    """Tracing whose exporter drops every span: what recording spans costs alone."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        SpanExporter,
        SpanExportResult,
    )

    class Drop(SpanExporter):
        def export(self, spans: Any) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Drop()))
    return tracing.Tracing(provider, None)


@contextlib.contextmanager
def receiver() -> Iterator[str]:
    process = subprocess.Popen([sys.executable, "-c", _RECEIVER], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        yield f"http://127.0.0.1:{process.stdout.readline().strip()}"
    finally:
        process.terminate()
        process.wait(10)


async def main(rounds: int, calls: int) -> dict[str, Any]:
    policies = compile_policies(SHIPPED)
    chain = local_chain(policies)
    service = InterceptorService(static_source(policies))
    real_decision = metrics.decision

    def _off(*_: object) -> None:
        return None

    with receiver() as url:
        traced = tracing.configure(url, "bench")
        dropped = _dropping()
        tracers = {"spans": dropped, "tracing": traced, "both": traced}
        cores = {
            "neither": Interception(chain),
            "metrics": Interception(chain, observer=metrics.chain_observer),
            "spans": Interception(chain, tracer=dropped),
            "tracing": Interception(chain, tracer=traced),
            "both": Interception(chain, observer=metrics.chain_observer, tracer=traced),
        }
        attributes = {"rpc.system": "jsonrpc", "rpc.method": "tools/call"}

        async def gateway(config: str, payloads: list[dict[str, Any]]) -> tuple[float, float]:
            core = cores[config]
            tracer = tracers.get(config)
            started, cpu = time.perf_counter(), time.process_time()
            for payload in payloads:
                if tracer is not None:
                    parent = from_meta(payload.get("_meta"))
                    with tracer.request("gateway tools/call", attributes, parent):
                        await core.run("tools/call", "request", payload, origin="client")
                else:
                    await core.run("tools/call", "request", payload, origin="client")
            return _per_call(started, cpu, len(payloads))

        async def serve(config: str, invokes: list[dict[str, Any]]) -> tuple[float, float]:
            tracing._active = tracers.get(config)
            if config not in ("metrics", "both"):
                metrics.decision = _off  # type: ignore[assignment]
            try:
                started, cpu = time.perf_counter(), time.process_time()
                for params in invokes:
                    await service.invoke(params)
                return _per_call(started, cpu, len(invokes))
            finally:
                metrics.decision = real_decision  # type: ignore[assignment]
                tracing._active = traced

        def invoke_params() -> dict[str, Any]:
            payload = copy.deepcopy(CALL)
            meta = payload.pop("_meta")
            return {
                "name": "tool-guard",
                "event": "tools/call",
                "phase": "request",
                "payload": payload,
                "_meta": meta,
            }

        timings: dict[str, list[tuple[float, float]]] = {
            f"{p}_{c}": [] for p in ("gw", "sv") for c in CONFIGS
        }
        for config in CONFIGS:  # warm-up, untimed
            await gateway(config, [copy.deepcopy(CALL) for _ in range(20)])
            await serve(config, [invoke_params() for _ in range(20)])
        for _ in range(rounds):
            for config in CONFIGS:
                payloads = [copy.deepcopy(CALL) for _ in range(calls)]
                timings[f"gw_{config}"].append(await gateway(config, payloads))
                invokes = [invoke_params() for _ in range(calls)]
                timings[f"sv_{config}"].append(await serve(config, invokes))
        traced.flush()
        tracing.disable()
        dropped.shutdown()
    result: dict[str, Any] = {"load_average": [round(x, 2) for x in os.getloadavg()]}
    for index, clock in ((0, "wall"), (1, "cpu")):
        median = {
            key: statistics.median(v[index] for v in values) for key, values in timings.items()
        }
        for path, name in (("gw", "gateway"), ("sv", "serve")):
            base = median[f"{path}_neither"]
            result[f"{name}_{clock}_us"] = {c: round(median[f"{path}_{c}"], 1) for c in CONFIGS}
            result[f"{name}_{clock}_ratio"] = {
                c: round(median[f"{path}_{c}"] / base, 3) for c in CONFIGS[1:]
            }
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rounds, calls = (3, 100) if args.quick else (15, 500)
    print(json.dumps(anyio.run(main, rounds, calls), indent=2))

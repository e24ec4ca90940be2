"""The per-message cost of Prometheus metrics, against none, measured in the same run.

Two hot paths, each timed with its metric hook and with the hook replaced by a
no-op, interleaved round by round in one process:

- ``gateway``: the interception core's chain run on a ``tools/call`` request
  through the shipped policies (what the gateway does per message), with
  ``metrics.chain_observer`` as its observer or none;
- ``serve``: ``InterceptorService.invoke`` of one shipped validator (what
  ``policyc serve`` does per ``interceptor/invoke``), counting the decision or not.

Also the hook alone (``metrics.chain_run`` on the same chain result, the least
noisy figure on a loaded machine) and the time to render ``/metrics``.

    python bench/bench_metrics.py            # about a minute
    python bench/bench_metrics.py --quick    # a few seconds
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

from policy_engine.compiler import compile_policies
from policy_engine.integrations import local_chain
from policy_engine.interception import Interception
from policy_engine.observability import metrics
from policy_engine.server import InterceptorService, static_source

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted(p for p in (ROOT / "policies").glob("*.policy") if p.stem != "policies_test")
CALL = {"name": "read_file", "arguments": {"path": "/srv/docs/readme.md", "note": "x" * 2000}}


async def _per_call_us(step: Callable[[], Awaitable[Any]], calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        await step()
    return (time.perf_counter() - started) / calls * 1e6


async def main(rounds: int, calls: int) -> dict[str, float]:
    policies = compile_policies(SHIPPED)
    chain = local_chain(policies)
    with_metrics = Interception(chain, observer=metrics.chain_observer)
    without = Interception(chain)
    service = InterceptorService(static_source(policies))
    invoke = {"name": "tool-guard", "event": "tools/call", "phase": "request", "payload": CALL}
    real_decision = metrics.decision

    def _off(*_: object) -> None:
        return None

    async def gateway(core: Interception) -> None:
        await core.run("tools/call", "request", CALL, origin="client")

    async def serve() -> None:
        await service.invoke(invoke)

    timings: dict[str, list[float]] = {k: [] for k in ("gw_on", "gw_off", "sv_on", "sv_off")}
    for _ in range(rounds):
        timings["gw_on"].append(await _per_call_us(lambda: gateway(with_metrics), calls))
        timings["gw_off"].append(await _per_call_us(lambda: gateway(without), calls))
        timings["sv_on"].append(await _per_call_us(serve, calls))
        metrics.decision = _off  # type: ignore[assignment]
        try:
            timings["sv_off"].append(await _per_call_us(serve, calls))
        finally:
            metrics.decision = real_decision  # type: ignore[assignment]
    runs: list[Any] = []
    await Interception(chain, observer=runs.append).run(
        "tools/call", "request", CALL, origin="client"
    )
    result = runs[0].result
    started = time.perf_counter()
    for _ in range(calls * 5):
        metrics.chain_run(result)
    hook_us = (time.perf_counter() - started) / (calls * 5) * 1e6
    started = time.perf_counter()
    for _ in range(50):
        metrics.exposition()
    render_us = (time.perf_counter() - started) / 50 * 1e6
    median = {key: statistics.median(values) for key, values in timings.items()}
    return {
        "gateway_us_without": median["gw_off"],
        "gateway_us_with": median["gw_on"],
        "gateway_overhead_us": median["gw_on"] - median["gw_off"],
        "serve_us_without": median["sv_off"],
        "serve_us_with": median["sv_on"],
        "serve_overhead_us": median["sv_on"] - median["sv_off"],
        "interceptors_in_chain": float(len(result.results)),
        "chain_run_hook_us": hook_us,
        "render_metrics_us": render_us,
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rounds, calls = (5, 200) if args.quick else (21, 1000)
    result = anyio.run(main, rounds, calls)
    print(json.dumps({key: round(value, 2) for key, value in result.items()}, indent=2))

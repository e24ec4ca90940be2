"""Memory stays flat under sustained invokes (allocations, not timings).

Runs the server's transport-free service over the shipped policies, with a
decision log, and compares traced memory after a warm-up with memory after
many more invokes: a per-invoke leak of even a few hundred bytes would show.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import os
import tracemalloc
from pathlib import Path
from typing import Any

from policy_engine.compiler import compile_policies
from policy_engine.server import DecisionLog, InterceptorService, static_source
from policy_engine.wire import InterceptorError

POLICIES = Path(__file__).resolve().parents[2] / "policies"

CALLS: list[dict[str, Any]] = [
    {
        "name": "tool-guard",
        "event": "tools/call",
        "phase": "request",
        "payload": {"name": "shell_exec", "arguments": {}},
    },
    {
        "name": "pii-redactor",
        "event": "tools/call",
        "phase": "request",
        "payload": {"name": "send", "arguments": {"email": "a@b.co", "body": "SSN 123-45-6789"}},
    },
    {
        "name": "sampling-guard",
        "event": "sampling/createMessage",
        "phase": "request",
        "payload": {"messages": [], "maxTokens": 99999},
    },
    {"name": "no-such-interceptor", "event": "tools/call", "phase": "request", "payload": {}},
]


_configs = itertools.count()


def _varying_config() -> dict[str, Any]:
    """A glob list never sent before: caches keyed by config must stay bounded."""
    return {
        "name": "admin-only-tools",
        "event": "tools/call",
        "phase": "request",
        "payload": {"name": "deploy_web", "arguments": {}},
        "config": {"adminTools": [f"deploy_{next(_configs)}_*", "rotate_keys"]},
    }


async def _burst(service: InterceptorService, rounds: int) -> None:
    for _ in range(rounds):
        for call in [*CALLS, _varying_config()]:
            # The unknown name is answered with an error, by design.
            with contextlib.suppress(InterceptorError):
                await service.invoke(call)


async def test_memory_is_flat_across_thousands_of_invokes() -> None:
    log = DecisionLog(os.devnull)  # a log that kept lines would grow
    service = InterceptorService(static_source(compile_policies([POLICIES])), log)
    await _burst(service, 250)  # warm caches, regex objects, pydantic validators
    gc.collect()
    tracemalloc.start()
    try:
        await _burst(service, 50)
        gc.collect()
        baseline, _ = tracemalloc.get_traced_memory()
        await _burst(service, 1000)  # 5,000 more invokes, 1,000 distinct configs
        gc.collect()
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        log.close()
    growth = after - baseline
    assert growth < 200_000, f"memory grew by {growth} bytes over 5,000 invokes"

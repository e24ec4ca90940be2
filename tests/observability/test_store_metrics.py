"""Metrics added for issue 31: flow-store and limit-store failures by store, kind and
operation (a real redis-server stopped under a real `policyc serve --http`, and the
in-process stores filling up), and the sessions a `policyc serve --http` holds."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from flow.conftest import RedisServer, free_port
from flow.test_flow_replicas import READ, invoke, invoke_error, replica, write_guard
from gateway_harness import ROOT, running
from scrape import scrape, value
from server_harness import http_client, list_interceptors

from policy_engine.cli.metrics_options import count_store_errors
from policy_engine.flow import FlowEntry, FlowLimits, FlowStoreError, MemoryFlowStore
from policy_engine.limits import Charge, LimitBounds, LimitStoreError, MemoryLimitStore
from policy_engine.observability.metrics import REGISTRY

ERRORS = "policyc_store_errors_total"
CLI = [sys.executable, "-m", "policy_engine.cli.main"]


def counted(store: str, kind: str, operation: str) -> float:
    labels = {"store": store, "kind": kind, "operation": operation}
    return REGISTRY.get_sample_value(ERRORS, labels) or 0.0


async def test_a_full_in_process_store_is_counted_per_store_and_operation() -> None:
    count_store_errors()
    limits_before = counted("limit", "memory", "new_counter")
    flows_before = counted("flow", "memory", "open_session")
    counters = MemoryLimitStore(LimitBounds(max_keys=1))
    await counters.charge([Charge("rule", "a", 1, 10, 60)])
    with pytest.raises(LimitStoreError):
        await counters.charge([Charge("rule", "b", 1, 10, 60)])
    flows = MemoryFlowStore(FlowLimits(max_sessions=1))

    await flows.remember("s1", {"f" * 64: FlowEntry("fs", "a file")})
    with pytest.raises(FlowStoreError):
        await flows.remember("s2", {"e" * 64: FlowEntry("fs", "a file")})
    assert counted("limit", "memory", "new_counter") == limits_before + 1
    assert counted("flow", "memory", "open_session") == flows_before + 1


@pytest.mark.e2e
async def test_redis_down_under_serve_is_counted_as_flow_store_errors(tmp_path: Path) -> None:
    redis = RedisServer(free_port(), tmp_path)
    with replica(write_guard(tmp_path), redis.url) as url, anyio.fail_after(90):
        base = url.removesuffix("/mcp")
        before = scrape(base)
        error = await invoke_error(url, "request", READ, "s1")  # nothing listens: down
        assert "flow store unavailable" in str(error.error.data)
        redis.start()
        try:
            assert (await invoke(url, "request", READ, "s1"))["valid"] is True
        finally:
            redis.stop()
        after = scrape(base)
    failed = {
        dict(labels)["operation"]: count
        for (name, labels), count in after.items()
        if name == ERRORS and dict(labels)["store"] == "flow" and dict(labels)["kind"] == "redis"
    }
    assert sum(failed.values()) == 1 and set(failed) <= {"recall", "remember", "last", "set_last"}
    assert not any(name == ERRORS for name, _ in before)  # none before Redis was asked


@pytest.mark.e2e
async def test_serve_http_counts_its_open_sessions() -> None:
    """Legacy clients: the 2026-07-28 protocol has no sessions to count."""
    port = free_port()
    argv = [*CLI, "serve", str(ROOT / "policies" / "tool-guard.policy")]
    argv += ["--http", f"127.0.0.1:{port}"]
    with running(argv, port) as url, anyio.fail_after(90):
        base = url.removesuffix("/mcp")
        async with http_client(url, mode="legacy") as first:
            await list_interceptors(first)
            async with http_client(url, mode="legacy") as second:
                await list_interceptors(second)
                both = scrape(base)
            one = scrape(base)  # the second client ended its session (DELETE)
    assert value(both, "policyc_sessions_active") == 2
    assert value(both, "policyc_sessions_total") == 2
    assert value(one, "policyc_sessions_active") == 1
    assert value(one, "policyc_sessions_total") == 2

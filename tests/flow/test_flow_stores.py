"""The flow stores keep fingerprints within their bounds, share state through
Redis, and fail closed (a FlowStoreError) when Redis is down."""

from __future__ import annotations

import tracemalloc

import anyio
import pytest

from policy_engine.flow import (
    Fingerprinter,
    FlowEntry,
    FlowLimits,
    FlowStoreError,
    MemoryFlowStore,
    Recall,
)
from policy_engine.flow.redis_store import RedisFlowStore

from .conftest import RedisServer, free_port

pytestmark = pytest.mark.e2e

ENTRY = FlowEntry("filesystem", "tools/call response of read_file at $.content[0].text")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_fingerprints_are_keyed_and_never_the_value() -> None:
    one, other = Fingerprinter(b"k" * 32), Fingerprinter(b"j" * 32)
    secret = "sk_live_0123456789abcdefghijklmn"
    assert one.of(secret) == one.of(secret)
    assert one.of(secret) != other.of(secret)
    assert secret not in one.of(secret) and len(one.of(secret)) == 32
    with pytest.raises(ValueError):
        Fingerprinter(b"short")


def test_a_session_that_sees_100000_secrets_stays_within_its_cap() -> None:
    store = MemoryFlowStore(FlowLimits(max_entries_per_session=1000))
    names = Fingerprinter()
    for batch in range(100):
        store.remember_now("s", {names.of(f"secret-{batch}-{i}"): ENTRY for i in range(1000)})
    assert store.entry_count("s") == 1000
    # the first are kept; the rest are not, and the session says its state is incomplete
    first = store.recall_now("s", [names.of("secret-0-0"), names.of("secret-99-999")])
    assert list(first.entries) == [names.of("secret-0-0")]
    assert first.lost is not None and "--flow-max-entries" in first.lost


def test_an_overflow_lasts_until_what_was_left_out_would_have_aged_out() -> None:
    clock = Clock()
    store = MemoryFlowStore(FlowLimits(max_entries_per_session=2, ttl_seconds=60), clock)
    store.remember_now("s", {"a": ENTRY, "b": ENTRY, "c": ENTRY})
    assert store.recall_now("s", ["a"]).lost is not None
    clock.now += 30
    store.remember_now("s", {"a": ENTRY})  # a known value refreshes, it is not new
    assert store.recall_now("s", ["a"]).lost is not None
    clock.now += 31  # c, left out at 1000, would be gone now; b aged out
    assert store.recall_now("s", ["a", "b"]) == Recall({"a": ENTRY}, None)


def test_expired_entries_and_idle_sessions_are_gone() -> None:
    clock = Clock()
    store = MemoryFlowStore(FlowLimits(ttl_seconds=60), clock)
    store.remember_now("s", {"a": ENTRY})
    store.set_last_server_now("s", "filesystem")
    clock.now += 30
    store.remember_now("s", {"b": ENTRY})
    clock.now += 45  # a is 75 s old, b 45 s
    assert store.recall_now("s", ["a", "b"]) == Recall({"b": ENTRY})
    clock.now += 61
    assert store.recall_now("s", ["b"]) == Recall()
    assert store.last_server_now("s") is None
    assert store.session_count() == 0


def test_sessions_never_share_state() -> None:
    store = MemoryFlowStore()
    store.remember_now("session-a", {"fp": ENTRY})
    assert store.recall_now("session-b", ["fp"]) == Recall()


def test_sessions_holding_nothing_make_room_first_then_new_ones_are_refused() -> None:
    clock = Clock()
    store = MemoryFlowStore(FlowLimits(max_sessions=3, ttl_seconds=60), clock)
    store.remember_now("held-1", {"fp": ENTRY})
    store.set_last_server_now("clean", "filesystem")
    store.remember_now("held-2", {"fp": ENTRY})
    store.set_last_server_now("newcomer", "filesystem")  # the clean session made room
    assert store.last_server_now("clean") is None
    store.remember_now("held-3", {"fp": ENTRY})  # and now the newcomer did
    with pytest.raises(FlowStoreError, match="flow store full: 3 sessions"):
        store.set_last_server_now("one-too-many", "filesystem")
    assert all(store.recall_now(f"held-{n}", ["fp"]).entries for n in (1, 2, 3))
    clock.now += 61  # the idlest session expired: it makes room
    store.set_last_server_now("one-too-many", "filesystem")
    assert store.session_count() == 3 and store.entry_count("held-1") == 0


def test_memory_stays_flat_over_10000_sessions() -> None:
    store = MemoryFlowStore(FlowLimits(max_sessions=500))

    def fill(start: int) -> None:
        for n in range(start, start + 5000):
            store.set_last_server_now(f"session-{n}", "filesystem")

    tracemalloc.start()
    fill(0)
    before = tracemalloc.get_traced_memory()[0]
    fill(5000)
    grown = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert store.session_count() == 500
    assert grown < 256 * 1024, grown


async def test_two_stores_share_one_redis(redis_server: RedisServer) -> None:
    names = Fingerprinter(b"shared-key-for-both-replicas")
    writer = RedisFlowStore(redis_server.url, names)
    reader = RedisFlowStore(redis_server.url, names)
    try:
        with anyio.fail_after(10):
            await writer.remember("s", {"fp": ENTRY})
            await writer.set_last_server("s", "filesystem")
            assert await reader.recall("s", ["fp", "other"]) == Recall({"fp": ENTRY})
            assert await reader.last_server("s") == "filesystem"
            assert await reader.recall("another-session", ["fp"]) == Recall()
    finally:
        await writer.aclose()
        await reader.aclose()


async def test_redis_keeps_the_cap_and_no_client_text_in_keys(redis_server: RedisServer) -> None:
    import redis.asyncio as aioredis

    names = Fingerprinter(b"shared-key-for-both-replicas")
    store = RedisFlowStore(redis_server.url, names, FlowLimits(max_entries_per_session=50))
    raw = aioredis.Redis.from_url(redis_server.url)
    try:
        with anyio.fail_after(20):
            for batch in range(10):
                await store.remember(
                    "user@example.com", {names.of(f"{batch}-{i}"): ENTRY for i in range(20)}
                )
            keys = [k.decode() for k in await raw.keys("*")]
            assert all("example.com" not in key for key in keys)
            table = next(k for k in keys if k.endswith(":t"))
            assert await raw.hlen(table) == 50
            assert 0 < await raw.ttl(table) <= 3600
            kept = await store.recall("user@example.com", [names.of("0-0"), names.of("9-19")])
            assert list(kept.entries) == [names.of("0-0")]
            assert kept.lost is not None and "--flow-max-entries" in kept.lost
    finally:
        await store.aclose()
        await raw.aclose()


async def test_redis_entries_expire(redis_server: RedisServer) -> None:
    names = Fingerprinter(b"shared-key-for-both-replicas")
    store = RedisFlowStore(redis_server.url, names, FlowLimits(ttl_seconds=1))
    try:
        with anyio.fail_after(10):
            await store.remember("s", {"fp": ENTRY})
            assert await store.recall("s", ["fp"]) == Recall({"fp": ENTRY})
            while (await store.recall("s", ["fp"])).entries:
                await anyio.sleep(0.1)
    finally:
        await store.aclose()


async def test_redis_down_fails_closed_and_recovers(tmp_path: object) -> None:
    from pathlib import Path

    server = RedisServer(free_port(), Path(str(tmp_path)))
    store = RedisFlowStore(server.url, Fingerprinter(b"shared-key-for-both-replicas"))
    try:
        with anyio.fail_after(10):
            with pytest.raises(FlowStoreError, match="flow store unavailable"):
                await store.recall("s", ["fp"])
            server.start()
            await store.remember("s", {"fp": ENTRY})
            assert await store.recall("s", ["fp"]) == Recall({"fp": ENTRY})
            server.stop()
            with pytest.raises(FlowStoreError):
                await store.remember("s", {"fp2": ENTRY})
    finally:
        server.stop()
        await store.aclose()


def test_a_full_store_fails_an_in_code_invoke_with_a_json_rpc_error() -> None:
    from policy_engine.compiler import compile_sources
    from policy_engine.compiler.flows import FlowRuntime
    from policy_engine.wire.errors import InterceptorError

    guard = "validator g {\n  on tools/call request\n  deny flow AWS_ACCESS_KEY across servers\n}\n"
    store = MemoryFlowStore(FlowLimits(max_sessions=1))
    store.remember_now("holder", {"fp": ENTRY})
    policy = compile_sources({"g.policy": guard}, flows=FlowRuntime(store))
    with pytest.raises(InterceptorError) as refused:
        policy.invoke_sync(
            "g", "tools/call", "request", {"name": "x"}, context={"sessionId": "newcomer"}
        )
    assert refused.value.code == -32603
    assert "flow store full" in str(refused.value.data)


def test_values_across_sessions_are_capped_without_forgetting_any() -> None:
    store = MemoryFlowStore(FlowLimits(max_values=5))
    for n in range(3):
        store.remember_now(f"s{n}", {f"fp{n}-{i}": ENTRY for i in range(2)})
    assert store.value_count() == 5
    assert store.recall_now("s0", ["fp0-0"]).lost is None
    last = store.recall_now("s2", ["fp2-0", "fp2-1"])
    assert list(last.entries) == ["fp2-0"] and last.lost is not None

"""Rate-limit counters in a real redis-server: shared by replicas without lost or double
counts, bounded and expiring, and failing closed (then recovering) when Redis is down,
killed, restarted or hung."""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
import redis

from policy_engine.compiler import PolicySet, compile_sources
from policy_engine.compiler.rate_limits import RateLimitRuntime
from policy_engine.flow import Fingerprinter
from policy_engine.limits import Charge, LimitBounds, LimitStoreError
from policy_engine.limits.redis_store import RedisLimitStore
from policy_engine.wire import InvocationContext, ValidationResult
from policy_engine.wire.errors import InterceptorError

from .conftest import RedisServer, free_port

pytestmark = pytest.mark.e2e

KEY = Fingerprinter(b"k" * 32)
# Generous for a loaded machine: a store that answers must never time out here.
BOUNDS = LimitBounds(timeout_s=1.0)
# Store calls give up after four timeouts; this is the test's ceiling on "bounded".
BOUNDED_S = 15
PATIENT = LimitBounds(timeout_s=10.0)


def charge(key: str = "k", limit: float = 20, window: float = 60) -> list[Charge]:
    return [Charge("rule", key, 1, limit, window)]


async def test_two_replicas_hammering_one_counter_admit_exactly_the_limit(
    redis_server: RedisServer,
) -> None:
    replicas = [RedisLimitStore(redis_server.url, PATIENT) for _ in range(2)]
    allowed: list[bool] = []

    async def one(i: int) -> None:
        verdict = await replicas[i % 2].charge(charge())
        allowed.append(verdict.allowed)

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            for i in range(60):
                group.start_soon(one, i)
    assert len(allowed) == 60 and sum(allowed) == 20
    for store in replicas:
        await store.aclose()


async def test_counters_expire_and_their_names_hold_no_client_text(
    redis_server: RedisServer,
) -> None:
    async with _policy(
        redis_server.url, "limit rate 5 per minute by context.principal.id"
    ) as policy:
        for _ in range(3):
            assert (await _invoke(policy, "alice-secret-name")).valid
        raw = redis.Redis.from_url(redis_server.url)
        names = [n.decode() for n in raw.keys("*")]
        assert names and all("alice" not in name for name in names)
        counter = next(n for n in names if not n.endswith(":keys"))
        assert 0 < raw.pttl(counter) <= 60_000 * 3 / 5 + 1
        assert 0 < raw.pttl(next(n for n in names if n.endswith(":keys"))) <= 61_000
        raw.close()


async def test_new_keys_past_the_bound_are_refused_in_redis_too(redis_server: RedisServer) -> None:
    store = RedisLimitStore(redis_server.url, LimitBounds(max_keys=3, timeout_s=10.0))
    for key in ("victim", "a", "b"):
        assert (await store.charge(charge(key, limit=1))).allowed
    with pytest.raises(LimitStoreError, match="full"):
        await store.charge(charge("c", limit=1))
    assert not (await store.charge(charge("victim", limit=1))).allowed  # never evicted
    raw = redis.Redis.from_url(redis_server.url)
    assert raw.zcard("policyc:limit:rule:keys") == 3
    raw.close()
    await store.aclose()


async def test_a_store_that_is_not_there_fails_closed_in_bounded_time() -> None:
    store = RedisLimitStore(f"redis://127.0.0.1:{free_port()}/0", BOUNDS)
    with anyio.fail_after(BOUNDED_S), pytest.raises(LimitStoreError, match="unavailable"):
        await store.charge(charge())
    await store.aclose()


async def test_killed_mid_window_fails_closed_then_restarts_empty(
    redis_server: RedisServer,
) -> None:
    async with _policy(redis_server.url, "limit rate 2 per hour by context.principal.id") as policy:
        assert (await _invoke(policy, "alice")).valid
        assert (await _invoke(policy, "alice")).valid
        assert not (await _invoke(policy, "alice")).valid
        assert redis_server.process is not None
        redis_server.process.kill()
        redis_server.process.wait()
        with anyio.fail_after(BOUNDED_S), pytest.raises(InterceptorError) as failed:
            await _invoke(policy, "alice")
        assert failed.value.code == -32603
        assert (
            failed.value.data is not None
            and "limit store unavailable" in failed.value.data["reason"]
        )
        redis_server.start()  # no persistence: the counters are gone, and the limit starts afresh
        with anyio.fail_after(BOUNDED_S):
            while True:
                try:
                    assert (await _invoke(policy, "alice")).valid
                    break
                except InterceptorError:
                    await anyio.sleep(0.1)
        assert (await _invoke(policy, "alice")).valid
        assert not (await _invoke(policy, "alice")).valid


async def test_a_hung_store_fails_closed_in_bounded_time_and_recovers(
    redis_server: RedisServer,
) -> None:
    async with _policy(redis_server.url, "limit rate 4 per hour by context.principal.id") as policy:
        assert (await _invoke(policy, "alice")).valid
        assert redis_server.process is not None
        os.kill(redis_server.process.pid, signal.SIGSTOP)
        try:
            with anyio.fail_after(BOUNDED_S), pytest.raises(InterceptorError) as failed:
                await _invoke(policy, "alice")
            assert failed.value.code == -32603
        finally:
            os.kill(redis_server.process.pid, signal.SIGCONT)
        with anyio.fail_after(BOUNDED_S):
            while True:
                try:
                    result = await _invoke(policy, "alice")
                    break
                except InterceptorError:
                    await anyio.sleep(0.1)
        # The hung call's script may have run once Redis woke (a slow store over-counts, never
        # under-counts), but never twice: it is not resent. 1 + 0..1 + the rest = 4.
        later = [result.valid] + [(await _invoke(policy, "alice")).valid for _ in range(4)]
        assert later in ([True] * 3 + [False] * 2, [True] * 2 + [False] * 3)


async def test_failing_open_lets_messages_through_with_a_warning() -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    async with _policy(url, "limit rate 1 per hour by context.principal.id failing open") as policy:
        with anyio.fail_after(BOUNDED_S):
            result = await _invoke(policy, "alice")
        assert result.valid and result.severity == "warn"
        assert "not enforced: limit store unavailable" in (result.messages or [])[0].message


@asynccontextmanager
async def _policy(url: str, rule: str) -> AsyncIterator[PolicySet]:
    source = f"validator quota {{\n  on tools/call request\n  {rule}\n}}\n"
    store = RedisLimitStore(url, BOUNDS)
    try:
        yield compile_sources({"quota.policy": source}, rate_limits=RateLimitRuntime(store, KEY))
    finally:
        await store.aclose()


async def _invoke(policy: PolicySet, user: str) -> ValidationResult:
    context: Any = InvocationContext.model_validate({"principal": {"type": "user", "id": user}})
    result = await policy.invoke_fields(
        "quota", "tools/call", "request", {"name": "search"}, None, None, context
    )
    assert isinstance(result, ValidationResult)
    return result

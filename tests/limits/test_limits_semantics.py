"""Rate limits and quotas in one process: GCRA on a virtual clock, what counts, what a
refused client sees, and the bounds a hostile client cannot push past."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from policy_engine.chain.errors import chain_error
from policy_engine.compiler import PolicySet, compile_sources
from policy_engine.compiler.rate_limits import RateLimitRuntime
from policy_engine.limits import Charge, LimitBounds, LimitStoreError, MemoryLimitStore, gcra
from policy_engine.testing.local_chain import TracingProvider, run_local_chain
from policy_engine.wire import ChainExecutionParams, InvocationContext, ValidationResult
from policy_engine.wire.errors import InterceptorError

SECRET = "sk_live_do_not_echo_0123456789"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def limited(body: str, clock: Clock, bounds: LimitBounds | None = None) -> PolicySet:
    source = f"validator quota {{\n  on tools/call request\n{body}\n}}\n"
    runtime = RateLimitRuntime(MemoryLimitStore(bounds, clock=clock))
    return compile_sources({"quota.policy": source}, rate_limits=runtime)


def call(
    policy: PolicySet, name: str = "search_web", user: str | None = "alice", **arguments: Any
) -> ValidationResult:
    context = {"principal": {"type": "user", "id": user}} if user is not None else {}
    result = policy.invoke_sync(
        "quota", "tools/call", "request", {"name": name, "arguments": arguments}, context=context
    )
    assert isinstance(result, ValidationResult)
    return result


def test_the_n_plus_first_call_in_the_window_is_refused_with_its_wait() -> None:
    clock = Clock()
    policy = limited("  limit rate 60 per minute by context.principal.id", clock)
    assert all(call(policy).valid for _ in range(60))
    refused = call(policy)
    assert not refused.valid
    assert refused.info is not None and refused.info["retryAfterMs"] == 1000
    clock.now += 0.999
    assert not call(policy).valid
    clock.now += 0.001
    assert call(policy).valid


def test_no_double_burst_at_a_window_boundary() -> None:
    """A fixed window lets 2N through around its edge; GCRA lets N, then N per window."""
    clock = Clock()
    policy = limited("  limit rate 10 per minute", clock)
    clock.now = 59.9  # the end of a fixed window
    assert sum(call(policy).valid for _ in range(10)) == 10
    clock.now = 60.1  # a fixed window would start afresh here
    assert sum(call(policy).valid for _ in range(10)) == 0


def test_any_interval_admits_at_most_the_documented_bound() -> None:
    """In any interval of length t at most L * (1 + t / W) units pass (docs/language.md)."""
    rng = random.Random(7)
    store = MemoryLimitStore(clock=Clock())
    limit, window = 5.0, 10.0
    admitted: list[tuple[float, float]] = []
    now = 0.0
    for _ in range(2000):
        now += rng.expovariate(2.0)
        amount = rng.choice([1.0, 1.0, 2.0, 0.5])
        store.clock = lambda now=now: now  # type: ignore[misc]
        if store.charge_now([Charge("r", "k", amount, limit, window)]).allowed:
            admitted.append((now, amount))
    for i, (start, _) in enumerate(admitted):
        total = 0.0
        for at, amount in admitted[i:]:
            total += amount
            assert total <= limit * (1 + (at - start) / window) + 1e-9


def test_a_key_is_counted_alone_and_json_encoded() -> None:
    """Alice's calls never spend Bob's budget; key values cannot be spliced to collide."""
    clock = Clock()
    policy = limited("  limit rate 2 per hour by context.principal.id, $.arguments.team", clock)
    assert call(policy, user="a", team="b|c").valid
    assert call(policy, user="a", team="b|c").valid
    assert not call(policy, user="a", team="b|c").valid
    assert call(policy, user="a|b", team="c").valid
    assert call(policy, user="a", team=["b", "c"]).valid
    assert call(policy, user="bob", team="b|c").valid


def test_a_message_without_its_key_is_refused_not_pooled() -> None:
    clock = Clock()
    policy = limited("  limit rate 100 per minute by context.principal.id", clock)
    missing = call(policy, user=None)
    assert not missing.valid
    assert "context.principal.id" in (missing.messages or [])[0].message


def test_total_counts_the_amount_and_refuses_a_bad_one_without_echoing_it() -> None:
    clock = Clock()
    policy = limited("  limit total $.arguments.tokens 1000 per day by context.principal.id", clock)
    assert call(policy, tokens=600).valid
    over = call(policy, tokens=500)
    assert not over.valid and over.info is not None and over.info["retryAfterMs"] > 0
    assert call(policy, tokens=400).valid
    for bad in (-1, SECRET, None, True):
        refused = call(policy, tokens=bad)
        assert not refused.valid
        assert SECRET not in json.dumps(refused.model_dump(mode="json"))
    whole = call(policy, user="bob", tokens=1001)
    assert not whole.valid and "retryAfterMs" not in (whole.info or {})


def test_a_request_refused_by_another_rule_spends_nothing() -> None:
    clock = Clock()
    policy = limited(
        '  deny if $.arguments.q == "bad"\n'
        "  limit rate 2 per hour by context.principal.id\n"
        "  limit rate 100 per hour by context.principal.id",
        clock,
    )
    for _ in range(10):
        assert not call(policy, q="bad").valid
    assert call(policy).valid and call(policy).valid
    assert not call(policy).valid


def test_a_request_one_limit_refuses_spends_nothing_on_the_others() -> None:
    clock = Clock()
    policy = limited(
        '  limit rate 1 per hour by context.principal.id if $.name == "search_web"\n'
        "  limit rate 3 per hour by context.principal.id",
        clock,
    )
    assert call(policy).valid
    for _ in range(5):
        assert not call(policy).valid  # the first limit refuses; the second must not count
    assert call(policy, name="read").valid
    assert call(policy, name="read").valid
    assert not call(policy, name="read").valid


def test_a_guard_scopes_the_limit() -> None:
    clock = Clock()
    policy = limited('  limit rate 1 per hour if $.name like "search_*"', clock)
    assert call(policy).valid and not call(policy).valid
    assert all(call(policy, name="read_file").valid for _ in range(5))


def test_new_keys_past_the_bound_are_refused_and_live_counters_stay() -> None:
    """A client minting keys cannot evict (and so reset) another client's counter."""
    clock = Clock()
    bounds = LimitBounds(max_keys=3)
    policy = limited("  limit rate 1 per minute by $.arguments.k", clock, bounds)
    assert call(policy, k="victim").valid
    assert call(policy, k="x1").valid and call(policy, k="x2").valid
    with pytest.raises(InterceptorError) as full:
        call(policy, k="x3")
    assert full.value.code == -32603
    reason = "limit store full (3 live counters)"
    assert full.value.data == {"interceptor": "quota", "reason": reason}
    assert not call(policy, k="victim").valid  # still counted, never dropped
    clock.now += 61  # every counter has drained: they may go now
    assert call(policy, k="x3").valid
    assert not call(policy, k="x3").valid


def test_the_memory_store_holds_at_most_its_bound_under_a_flood() -> None:
    clock = Clock()
    store = MemoryLimitStore(LimitBounds(max_keys=1000), clock=clock)
    refused = 0
    for i in range(20_000):
        try:
            store.charge_now([Charge("r", f"k{i}", 1, 10, 60)])
        except LimitStoreError:
            refused += 1
        clock.now += 0.001
        assert store.counter_count("r") <= 1000
    # Counters drain 6 s after their one call and are swept then: room comes back.
    assert 15_000 < refused < 19_000


def test_gcra_refuses_an_amount_above_the_whole_limit_for_good() -> None:
    outcome = gcra(0.0, 5.0, 11, 10, 60)
    assert not outcome.allowed and outcome.retry_after_s is None


async def run(policy: PolicySet, source: str, user: str) -> Any:
    params = ChainExecutionParams(
        event="tools/call",
        phase="request",
        payload={"name": "search_web", "arguments": {"q": SECRET}},
        context=InvocationContext.model_validate({"principal": {"type": "user", "id": user}}),
    )
    return await run_local_chain(TracingProvider(policy), params, "sending")


async def test_the_chain_refusal_carries_retry_after_and_no_payload() -> None:
    clock = Clock()
    policy = limited("  limit rate 1 per minute by context.principal.id", clock)
    assert (await run(policy, "", "alice")).status == "success"
    refused = await run(policy, "", "alice")
    error = chain_error(refused)
    assert error is not None and error.code == -32602
    assert error.data is not None and error.data["retryAfterMs"] == 60_000
    assert SECRET not in json.dumps(error.to_wire())


async def test_audit_mode_counts_and_warns_without_refusing() -> None:
    clock = Clock()
    source = (
        "validator quota {\n  on tools/call request\n  mode audit\n  fail open\n"
        "  limit rate 1 per minute by context.principal.id\n}\n"
    )
    runtime = RateLimitRuntime(MemoryLimitStore(clock=clock))
    policy = compile_sources({"q.policy": source}, rate_limits=runtime)
    assert (await run(policy, "", "alice")).status == "success"
    second = await run(policy, "", "alice")
    assert second.status == "success"
    (entry,) = second.results
    assert entry.mode == "audit" and entry.severity == "error"
    assert "rate limit exceeded" in (entry.messages or [])[0].message
    assert chain_error(second) is None

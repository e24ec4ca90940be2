"""The bench harness gives every timed call a fresh payload, so identity caches hide nothing."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from _common import FreshPayloads, measure, pool_size


class IdentityCached:
    """Work memoised on object identity, the way `PolicySet` once cached its bounds walk."""

    def __init__(self, entries: int) -> None:
        self.entries = entries
        self.cache: list[tuple[Any, int]] = []
        self.work = 0

    def __call__(self, payload: Any) -> int:
        for known, value in self.cache:
            if known is payload:
                return value
        self.work += 1
        value = len(payload["text"])
        self.cache = [*self.cache, (payload, value)][-self.entries :]
        return value


def _timed_calls(run: Callable[[], object]) -> int:
    calls = 0

    def counted() -> object:
        nonlocal calls
        calls += 1
        return run()

    stats = measure({"case": counted}, budget_s=0.001, rounds=3, warmup=2, min_runs=30)
    assert stats["case"].runs == calls - 2
    return calls


@pytest.mark.parametrize("entries", [1, 2, 15])
def test_an_identity_cache_smaller_than_the_pool_does_all_the_work(entries: int) -> None:
    fresh = FreshPayloads({"text": "x" * 100}, 16)
    cached = IdentityCached(entries)
    calls = _timed_calls(lambda: cached(fresh()))
    assert cached.work == calls


def test_the_same_object_every_call_lets_the_cache_skip_the_work() -> None:
    payload = {"text": "x" * 100}
    cached = IdentityCached(1)
    calls = _timed_calls(lambda: cached(payload))
    assert calls > 1
    assert cached.work == 1


def test_copies_are_distinct_deep_and_equal() -> None:
    payload = {"text": "x", "nested": {"list": [1, 2]}}
    fresh = FreshPayloads(payload, 4)
    seen = [fresh() for _ in range(8)]
    assert all(copy == payload for copy in seen)
    assert len({id(copy) for copy in seen[:4]}) == 4
    assert seen[:4] == seen[4:]
    assert len({id(copy["nested"]["list"]) for copy in seen[:4]}) == 4
    assert all(copy is not payload for copy in seen)


def test_a_pool_of_one_is_refused() -> None:
    with pytest.raises(ValueError):
        FreshPayloads({}, 1)


def test_pools_shrink_only_for_large_payloads() -> None:
    assert pool_size(10_000) == 64
    assert pool_size(1_000_000) >= 2


def test_one_pool_per_contender_because_a_shared_pool_can_alias() -> None:
    payload = {"text": "x" * 100}
    shared = FreshPayloads(payload, 4)
    cached = IdentityCached(1)
    # The other contender takes three copies per round: a stride of four.
    for _ in range(10):
        cached(shared())
        for _ in range(3):
            shared()
    assert cached.work == 1
    own = FreshPayloads(payload, 4)
    cached = IdentityCached(1)
    for _ in range(10):
        cached(own())
    assert cached.work == 10

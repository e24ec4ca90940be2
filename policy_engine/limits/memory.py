"""The in-process limit store: the default for one server or gateway process.

One float per counter. A counter whose TAT has passed holds nothing and is
the same as no counter, so it may be dropped; a live one never is. Past
`LimitBounds.max_keys` live counters for one rule, a request that needs a
new counter is refused (the store reports itself full) until some expire:
a client minting keys cannot push another client's counter out and so
reset it. Expired counters are swept when a rule is full, at most once a
second per rule, so the sweep's cost is bounded too.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from .gcra import gcra, verdict
from .store import Charge, LimitBounds, Verdict, failed

SWEEP_EVERY_S = 1.0


class MemoryLimitStore:
    def __init__(
        self, bounds: LimitBounds | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.bounds = bounds or LimitBounds()
        self.clock = clock
        self._tats: dict[str, dict[str, float]] = {}
        self._swept: dict[str, float] = {}
        # `invoke_sync` may be called from several threads: a check and its count are one step.
        self._lock = threading.Lock()

    def charge_now(self, charges: Sequence[Charge]) -> Verdict:
        with self._lock:
            return self._charge(charges)

    def _charge(self, charges: Sequence[Charge]) -> Verdict:
        now = self.clock()
        outcomes = []
        for charge in charges:
            counters = self._tats.setdefault(charge.rule, {})
            tat = counters.get(charge.key)
            if tat is None or tat <= now:
                self._make_room(charge.rule, counters, now)
            outcomes.append(gcra(tat or 0.0, now, charge.amount, charge.limit, charge.window_s))
        allowed = all(o.allowed for o in outcomes)
        if allowed:
            for charge, outcome in zip(charges, outcomes, strict=True):
                self._tats[charge.rule][charge.key] = outcome.tat
        return verdict(allowed, outcomes)

    def _make_room(self, rule: str, counters: dict[str, float], now: float) -> None:
        if len(counters) < self.bounds.max_keys:
            return
        if now - self._swept.get(rule, -SWEEP_EVERY_S) >= SWEEP_EVERY_S:
            self._swept[rule] = now
            for key in [k for k, tat in counters.items() if tat <= now]:
                del counters[key]
        if len(counters) >= self.bounds.max_keys:
            message = f"limit store full ({self.bounds.max_keys} live counters)"
            raise failed("memory", "new_counter", message)

    def counter_count(self, rule: str) -> int:
        return len(self._tats.get(rule, {}))

    async def charge(self, charges: Sequence[Charge]) -> Verdict:
        return self.charge_now(charges)

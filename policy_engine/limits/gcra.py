"""The generic cell rate algorithm: one number per key, no fixed windows.

A counter is its theoretical arrival time (TAT): when the bucket would be
empty again. A limit of L per window W lets each unit cost W/L of time and
allows a request while the TAT it would leave is at most W ahead of now. So
an idle key may spend L at once (a burst), then L per W as time passes: in
any interval of length t at most L * (1 + t / W) units pass, never the
2 L a fixed window lets through around its boundary in an instant.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .store import Verdict

EPSILON = 1e-9


@dataclass(frozen=True)
class Outcome:
    allowed: bool
    tat: float
    """The TAT to store if the request is counted (the old one when refused)."""
    level: float
    """What the counter held before: units spent and not yet recovered."""
    retry_after_s: float | None


def gcra(tat: float, now: float, amount: float, limit: float, window_s: float) -> Outcome:
    interval = window_s / limit
    base = max(tat, now)
    level = (base - now) / interval
    after = base + amount * interval
    if after - now <= window_s + EPSILON:
        return Outcome(True, after, level, None)
    if amount > limit:
        return Outcome(False, tat, level, None)
    return Outcome(False, tat, level, after - window_s - now)


def verdict(allowed: bool, outcomes: Sequence[Outcome]) -> Verdict:
    """The store's answer from each charge's outcome (shared with the Redis store's reply)."""
    waits = [o.retry_after_s for o in outcomes if not o.allowed]
    retry: float | None = None
    if not allowed and all(w is not None for w in waits):
        retry = max(w for w in waits if w is not None)
    refused = tuple(not o.allowed for o in outcomes)
    return Verdict(allowed, refused, tuple(o.level for o in outcomes), retry)

"""What a limit store is asked, what it answers, and the interface both stores implement."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol


class LimitStoreError(Exception):
    """The store cannot answer (Redis down, slow, full): limits fail closed on it."""


ErrorListener = Callable[[str, str], None]
"""Told ``(kind, operation)`` of each failed call: ``memory`` or ``redis``, and which call."""
_listeners: list[ErrorListener] = []


def on_error(listener: ErrorListener) -> None:
    """Call ``listener`` on every failure of a store call (the metrics count them); this
    layer imports nothing of policyc's, so the host hands the counter in."""
    if listener not in _listeners:
        _listeners.append(listener)


def failed(kind: str, operation: str, message: str) -> LimitStoreError:
    """The error to raise for a failed call, with the listeners told first."""
    for listener in list(_listeners):
        listener(kind, operation)
    return LimitStoreError(message)


@dataclass(frozen=True)
class LimitBounds:
    """Bounds on counter state; each has a CLI option (docs/language.md, "Rate limits")
    and a gateway config key, both held to the ranges below."""

    max_keys: int = 100_000
    """Live counters per rule. A request that needs a new one past this is refused (the
    store reports itself full); a live counter is never dropped to make room."""
    timeout_s: float = 0.5
    """How long one store round trip may take before the limit fails closed."""


MIN_KEYS = 1
TIMEOUT_RANGE_S = (0.01, 30.0)
"""What ``--limit-timeout`` and ``[limits] timeout_s`` accept: a round trip slower than
30 s is an outage, faster than 10 ms no store answers."""


@dataclass(frozen=True)
class Charge:
    """One limit's share of a request: ``amount`` against ``limit`` per ``window_s``."""

    rule: str
    """The counter's rule (names the key space the bound applies to); opaque."""
    key: str
    """The counter, opaque: a fingerprint of the rule and the key values."""
    amount: float
    limit: float
    window_s: float


@dataclass(frozen=True)
class Verdict:
    """The store's answer for every charge of one request, all or nothing."""

    allowed: bool
    refused: tuple[bool, ...]
    """Per charge: whether it alone was over its limit."""
    levels: tuple[float, ...]
    """Per charge: what the counter held before this request (in the limit's units)."""
    retry_after_s: float | None
    """When the request would be allowed, if ever (None: an amount above the whole limit)."""


class LimitStore(Protocol):
    bounds: LimitBounds

    async def charge(self, charges: Sequence[Charge]) -> Verdict:
        """Count every charge, or none of them if any is over its limit (atomically)."""
        ...

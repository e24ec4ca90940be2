"""Refused work is logged once per kind, then counted, never a traceback per connection.

A flood of idle connections or oversized bodies used to write a traceback for
each one (175,965 lines in one attack). Here the first refusal of each kind
is logged with the limit and the option that changes it; later ones are only
counted and summed up at most once a minute.
"""

from __future__ import annotations

import logging
import time

logger = logging.getLogger("policy_engine.server")

_SUMMARY_EVERY = 60.0


class RejectionLog:
    def __init__(self, summary_every: float = _SUMMARY_EVERY) -> None:
        self._counts: dict[str, int] = {}
        self._unreported: dict[str, int] = {}
        self._summary_every = summary_every
        self._last_summary = time.monotonic()

    def count(self, kind: str) -> int:
        return self._counts.get(kind, 0)

    def note(self, kind: str, explanation: str) -> None:
        """Count one ``kind`` of refusal; ``explanation`` is logged the first time only."""
        seen = self._counts.get(kind, 0)
        self._counts[kind] = seen + 1
        if seen == 0:
            logger.warning("%s: %s (logged once; later ones are counted)", kind, explanation)
            return
        self._unreported[kind] = self._unreported.get(kind, 0) + 1
        now = time.monotonic()
        if now - self._last_summary >= self._summary_every:
            self._last_summary = now
            summary = ", ".join(f"{n} x {k}" for k, n in sorted(self._unreported.items()))
            self._unreported.clear()
            logger.warning("since the last report: %s", summary)

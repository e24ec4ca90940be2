"""The in-process flow store: the default for one server or gateway process.

Bounded four ways, none of which forgets a value silently: entries per
session and in all (past either cap new values are not kept and the
session's state is marked incomplete, so its sends fail closed), age (an entry older than the
TTL is gone, and sessions idle that long are dropped), and sessions in all
(sessions holding nothing make room first; while every kept session holds
values, a new session is refused). The synchronous methods serve
`PolicySet.invoke_sync`; the async ones the `FlowStore` protocol.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from .store import OVERFLOWED, FlowEntry, FlowLimits, Recall, failed


@dataclass
class _Session:
    entries: OrderedDict[str, tuple[FlowEntry, float]] = field(default_factory=OrderedDict)
    """Oldest first, so aged entries leave from the front."""
    last_server: str | None = None
    touched: float = 0.0
    overflowed: float | None = None
    """When a value was last left out for want of room: the state is incomplete
    until that value would have aged out anyway."""


class MemoryFlowStore:
    def __init__(
        self, limits: FlowLimits | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limits = limits or FlowLimits()
        self._clock = clock
        self._sessions: dict[str, _Session] = {}
        # Least recently used first: sessions holding nothing, and those holding values.
        self._clean: OrderedDict[str, None] = OrderedDict()
        self._held: OrderedDict[str, None] = OrderedDict()
        self._values = 0
        """Entries kept across all sessions, for `max_values`."""

    # -- synchronous core ---------------------------------------------------

    def _drop(self, session: str) -> None:
        self._values -= len(self._sessions[session].entries)
        del self._sessions[session]
        self._clean.pop(session, None)
        self._held.pop(session, None)

    def _make_room(self, now: float) -> None:
        """Free one place, never by forgetting a session that holds values it may not send."""
        idlest = next(iter(self._held), None)
        if idlest is not None and now - self._sessions[idlest].touched > self.limits.ttl_seconds:
            self._drop(idlest)
            return
        if self._clean:
            self._drop(next(iter(self._clean)))
            return
        raise failed(
            "memory",
            "open_session",
            f"flow store full: {len(self._held)} sessions hold remembered values "
            "(--flow-max-sessions); a new session is refused until one expires",
        )

    def _session(self, session: str, create: bool) -> _Session | None:
        now = self._clock()
        found = self._sessions.get(session)
        if found is not None and now - found.touched > self.limits.ttl_seconds:
            self._drop(session)
            found = None
        if found is None:
            if not create:
                return None
            while len(self._sessions) >= self.limits.max_sessions:
                self._make_room(now)
            found = _Session()
            self._sessions[session] = found
        found.touched = now
        if found.entries or found.overflowed is not None:
            self._clean.pop(session, None)
            self._held[session] = None
            self._held.move_to_end(session)
        else:
            self._clean[session] = None
            self._clean.move_to_end(session)
        return found

    def _expire(self, state: _Session, now: float) -> None:
        oldest = now - self.limits.ttl_seconds
        while state.entries:
            first = next(iter(state.entries.values()))
            if first[1] >= oldest:
                break
            state.entries.popitem(last=False)
            self._values -= 1
        if state.overflowed is not None and state.overflowed < oldest:
            state.overflowed = None

    def remember_now(self, session: str, entries: Mapping[str, FlowEntry]) -> None:
        if not entries:
            return
        state = self._session(session, create=True)
        assert state is not None
        now = self._clock()
        self._expire(state, now)
        cap, total = self.limits.max_entries_per_session, self.limits.max_values
        for fingerprint, entry in entries.items():
            if fingerprint in state.entries:
                state.entries.move_to_end(fingerprint)
            elif len(state.entries) >= cap or self._values >= total:
                state.overflowed = now
                continue
            else:
                self._values += 1
            state.entries[fingerprint] = (entry, now)
        self._session(session, create=False)  # now a session that holds values

    def recall_now(self, session: str, fingerprints: Sequence[str]) -> Recall:
        state = self._session(session, create=False)
        if state is None:
            return Recall()
        self._expire(state, self._clock())
        found: dict[str, FlowEntry] = {}
        for fingerprint in fingerprints:
            item = state.entries.get(fingerprint)
            if item is not None:
                found[fingerprint] = item[0]
        return Recall(found, OVERFLOWED if state.overflowed is not None else None)

    def set_last_server_now(self, session: str, server: str) -> None:
        state = self._session(session, create=True)
        assert state is not None
        state.last_server = server

    def last_server_now(self, session: str) -> str | None:
        state = self._session(session, create=False)
        return state.last_server if state is not None else None

    def session_count(self) -> int:
        return len(self._sessions)

    def value_count(self) -> int:
        return self._values

    def entry_count(self, session: str) -> int:
        state = self._sessions.get(session)
        return len(state.entries) if state is not None else 0

    # -- FlowStore ------------------------------------------------------------

    async def remember(self, session: str, entries: Mapping[str, FlowEntry]) -> None:
        self.remember_now(session, entries)

    async def recall(self, session: str, fingerprints: Sequence[str]) -> Recall:
        return self.recall_now(session, fingerprints)

    async def set_last_server(self, session: str, server: str) -> None:
        self.set_last_server_now(session, server)

    async def last_server(self, session: str) -> str | None:
        return self.last_server_now(session)

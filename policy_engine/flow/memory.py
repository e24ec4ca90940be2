"""The in-process flow store: the default for one server or gateway process.

Bounded three ways: entries per session (oldest dropped first), age (an
entry older than the TTL is gone, and sessions idle that long are
dropped), and sessions in all (least recently used dropped first). The
synchronous methods serve `PolicySet.invoke_sync`; the async ones the
`FlowStore` protocol.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from .store import FlowEntry, FlowLimits


@dataclass
class _Session:
    entries: OrderedDict[str, tuple[FlowEntry, float]] = field(default_factory=OrderedDict)
    last_server: str | None = None
    touched: float = 0.0


class MemoryFlowStore:
    def __init__(
        self, limits: FlowLimits | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limits = limits or FlowLimits()
        self._clock = clock
        self._sessions: OrderedDict[str, _Session] = OrderedDict()

    # -- synchronous core ---------------------------------------------------

    def _session(self, session: str, create: bool) -> _Session | None:
        now = self._clock()
        found = self._sessions.get(session)
        if found is not None and now - found.touched > self.limits.ttl_seconds:
            del self._sessions[session]
            found = None
        if found is None:
            if not create:
                return None
            found = _Session()
            self._sessions[session] = found
            while len(self._sessions) > self.limits.max_sessions:
                self._sessions.popitem(last=False)
        found.touched = now
        self._sessions.move_to_end(session)
        return found

    def remember_now(self, session: str, entries: Mapping[str, FlowEntry]) -> None:
        state = self._session(session, create=True)
        assert state is not None
        now = self._clock()
        for fingerprint, entry in entries.items():
            state.entries[fingerprint] = (entry, now)
            state.entries.move_to_end(fingerprint)
        while len(state.entries) > self.limits.max_entries_per_session:
            state.entries.popitem(last=False)

    def recall_now(self, session: str, fingerprints: Sequence[str]) -> dict[str, FlowEntry]:
        state = self._session(session, create=False)
        if state is None:
            return {}
        oldest = self._clock() - self.limits.ttl_seconds
        found: dict[str, FlowEntry] = {}
        for fingerprint in fingerprints:
            item = state.entries.get(fingerprint)
            if item is None:
                continue
            if item[1] < oldest:
                del state.entries[fingerprint]
                continue
            found[fingerprint] = item[0]
        return found

    def set_last_server_now(self, session: str, server: str) -> None:
        state = self._session(session, create=True)
        assert state is not None
        state.last_server = server

    def last_server_now(self, session: str) -> str | None:
        state = self._session(session, create=False)
        return state.last_server if state is not None else None

    def session_count(self) -> int:
        return len(self._sessions)

    def entry_count(self, session: str) -> int:
        state = self._sessions.get(session)
        return len(state.entries) if state is not None else 0

    # -- FlowStore ------------------------------------------------------------

    async def remember(self, session: str, entries: Mapping[str, FlowEntry]) -> None:
        self.remember_now(session, entries)

    async def recall(self, session: str, fingerprints: Sequence[str]) -> dict[str, FlowEntry]:
        return self.recall_now(session, fingerprints)

    async def set_last_server(self, session: str, server: str) -> None:
        self.set_last_server_now(session, server)

    async def last_server(self, session: str) -> str | None:
        return self.last_server_now(session)

"""What a flow store keeps, and the interface both stores implement."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol


class FlowStoreError(Exception):
    """The store cannot answer (Redis down, a timeout): flow rules fail closed on it."""


@dataclass(frozen=True)
class FlowLimits:
    """Bounds on remembered state; every one has a CLI option (docs/flow.md)."""

    max_entries_per_session: int = 10_000
    ttl_seconds: float = 3600.0
    max_sessions: int = 10_000
    """In-process only: the oldest sessions are forgotten past this many."""


@dataclass(frozen=True)
class FlowEntry:
    """Where a remembered value was seen: the server and a human description of the place."""

    server: str
    source: str


class FlowStore(Protocol):
    """Per-session fingerprints and the server of the session's last request."""

    limits: FlowLimits

    async def remember(self, session: str, entries: Mapping[str, FlowEntry]) -> None: ...

    async def recall(self, session: str, fingerprints: Sequence[str]) -> dict[str, FlowEntry]: ...

    async def set_last_server(self, session: str, server: str) -> None: ...

    async def last_server(self, session: str) -> str | None: ...

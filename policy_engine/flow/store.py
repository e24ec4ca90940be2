"""What a flow store keeps, and the interface both stores implement."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol


class FlowStoreError(Exception):
    """The store cannot answer (Redis down, a timeout, full): flow rules fail closed on it."""


ErrorListener = Callable[[str, str], None]
"""Told ``(kind, operation)`` of each failed call: ``memory`` or ``redis``, and which call."""
_listeners: list[ErrorListener] = []


def on_error(listener: ErrorListener) -> None:
    """Call ``listener`` on every failure of a store call (the metrics count them); this
    layer imports nothing of policyc's, so the host hands the counter in."""
    if listener not in _listeners:
        _listeners.append(listener)


def failed(kind: str, operation: str, message: str) -> FlowStoreError:
    """The error to raise for a failed call, with the listeners told first."""
    for listener in list(_listeners):
        listener(kind, operation)
    return FlowStoreError(message)


@dataclass(frozen=True)
class FlowLimits:
    """Bounds on remembered state; every one has a CLI option (docs/language.md)."""

    max_entries_per_session: int = 10_000
    """Past this many, a session's state is incomplete: nothing is dropped, new values
    are not kept, and every candidate value the session sends is refused."""
    ttl_seconds: float = 3600.0
    max_sessions: int = 10_000
    """In-process only: past this many, sessions holding nothing are forgotten first;
    a new session is refused while every kept session holds values."""
    max_values: int = 1_000_000
    """In-process only: values kept across all sessions (about 200 bytes each); past
    it, a session's new values are left out as past its own cap."""


@dataclass(frozen=True)
class FlowEntry:
    """Where a remembered value was seen: the server and a human description of the place."""

    server: str
    source: str


@dataclass(frozen=True)
class Recall:
    """What a session remembers of some fingerprints, and whether that is all it saw.

    ``lost`` names why the session's state cannot vouch for a value it lacks
    (it overflowed, or the store lost or does not trust its state): flow rules
    then treat every such value as seen on another server.
    """

    entries: dict[str, FlowEntry] = field(default_factory=dict)
    lost: str | None = None


OVERFLOWED = (
    "the session saw more values than the store keeps (--flow-max-entries, --flow-max-values)"
)


class FlowStore(Protocol):
    """Per-session fingerprints and the server of the session's last request."""

    limits: FlowLimits

    async def remember(self, session: str, entries: Mapping[str, FlowEntry]) -> None: ...

    async def recall(self, session: str, fingerprints: Sequence[str]) -> Recall: ...

    async def set_last_server(self, session: str, server: str) -> None: ...

    async def last_server(self, session: str) -> str | None: ...

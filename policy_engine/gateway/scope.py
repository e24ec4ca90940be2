"""What a gateway session knows of its client's open requests, shared by the parts
that answer them and the parts that route a backend's traffic back to them."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp_types import RequestId

from policy_engine.interception import InterceptionSession


@dataclass(frozen=True)
class RequestScope:
    """What one client request brings that the session does not know: its caller's view
    (filtered lists, flow session) and its 2026-07-28 envelope, for requests it causes."""

    chain: InterceptionSession
    envelope: dict[str, Any] | None


SCOPE: ContextVar[RequestScope | None] = ContextVar("gateway_request", default=None)


@dataclass
class OpenRequests:
    """The client's requests not yet answered, and what a backend's messages need to
    find the one they belong to."""

    inflight: dict[RequestId, anyio.CancelScope] = field(default_factory=dict)
    progress: dict[Any, RequestId] = field(default_factory=dict)
    """progress token -> the client request it reports on (HTTP routes by it)"""
    logging: dict[RequestId, dict[str, Any]] = field(default_factory=dict)
    """2026-07-28 requests that opted in to log messages -> their envelope"""

    def latest(self) -> RequestId | None:
        """The newest client request still open: what a backend's request most likely serves.

        The backend's own request does not say which client request caused it;
        over HTTP it must ride on some open request's stream (or the GET stream).
        """
        return next(reversed(self.inflight), None)

    async def drain(self, limit_s: float) -> None:
        """Wait (at most ``limit_s``) until every open request has been answered."""
        with anyio.move_on_after(limit_s):
            while self.inflight:
                await anyio.sleep(0.01)

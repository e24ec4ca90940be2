"""A cap on stateful HTTP sessions that makes room by ending the oldest idle one.

The SDK caps sessions too, but at the cap it answers every new client with
503 until old sessions expire (30 minutes by default), so 10,000 abandoned
``initialize`` calls lock everyone out. Here the sessions are tracked from
the outside (the ``Mcp-Session-Id`` each response hands out and each request
carries); when a new one would pass ``max_sessions``, the session that has
been idle longest is ended with the protocol's own ``DELETE``, sent straight
to the SDK app. Only when every session has a request in flight is the new
client refused, with a JSON-RPC error.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from policy_engine.observability import metrics
from policy_engine.wire.errors import INTERNAL_ERROR

from .framing import rejection
from .http_guard import send_error
from .rejections import RejectionLog

_SESSION_HEADER = b"mcp-session-id"


@dataclass
class _Session:
    in_flight: int = 0
    last_active: float = 0.0


def _session_id(scope: Scope) -> bytes | None:
    for key, value in scope["headers"]:
        if key == _SESSION_HEADER:
            return bytes(value)
    return None


class SessionLimiter:
    """Admits a new session only when there is room or an idle one can be ended."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        max_sessions: int,
        session_idle_timeout: float,
        rejections: RejectionLog,
        path: str,
    ) -> None:
        self._app = app
        self._path = path
        self._max_sessions = max_sessions
        self._idle_timeout = session_idle_timeout
        self._rejections = rejections
        self._sessions: OrderedDict[bytes, _Session] = OrderedDict()
        metrics.watch_sessions(self)

    def live_sessions(self) -> int:
        """Sessions open now: busy, or idle for less than the idle timeout (the SDK ends
        the others on its own; this limiter forgets them only when it next needs room)."""
        now = time.monotonic()
        return sum(
            1
            for session in list(self._sessions.values())
            if session.in_flight or now - session.last_active <= self._idle_timeout
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != self._path:
            await self._app(scope, receive, send)
            return
        session_id = _session_id(scope)
        if session_id is None:
            await self._open(scope, receive, send)
            return
        session = self._sessions.get(session_id)
        if session is None:
            await self._app(scope, receive, send)  # unknown or ended: the SDK answers 404
            return
        self._sessions.move_to_end(session_id)
        session.in_flight += 1
        status: int | None = None

        async def watching_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self._app(scope, receive, watching_send)
        finally:
            session.in_flight -= 1
            session.last_active = time.monotonic()
            if status == 404 or (scope["method"] == "DELETE" and status == 200):
                self._sessions.pop(session_id, None)

    async def _open(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] == "POST" and not await self._make_room(scope):
            self._rejections.note(
                "refused a new session",
                f"{self._max_sessions} sessions are open and all busy (--max-sessions)",
            )
            full = rejection(None, INTERNAL_ERROR, "Too many open sessions", "too many sessions")
            await send_error(send, 503, full)
            return

        async def registering_send(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                for key, value in message.get("headers", []):
                    if key == _SESSION_HEADER and bytes(value) not in self._sessions:
                        self._sessions[bytes(value)] = _Session(last_active=time.monotonic())
                        metrics.session_started()
            await send(message)

        await self._app(scope, receive, registering_send)

    async def _make_room(self, scope: Scope) -> bool:
        """Forget expired sessions; at the cap end the one idle longest. False if none is."""
        now = time.monotonic()
        expired = [
            key
            for key, session in self._sessions.items()
            if not session.in_flight and now - session.last_active > self._idle_timeout
        ]
        for key in expired:
            del self._sessions[key]  # the SDK has ended these already
        if len(self._sessions) < self._max_sessions:
            return True
        idle = next((key for key, s in self._sessions.items() if not s.in_flight), None)
        if idle is None:
            return False
        del self._sessions[idle]
        self._rejections.note(
            "ended the session idle longest to make room",
            f"{self._max_sessions} sessions were open (--max-sessions)",
        )
        await self._end(scope, idle)
        return True

    async def _end(self, scope: Scope, session_id: bytes) -> None:
        """End ``session_id`` with a DELETE handed to the SDK app, as a client would."""
        headers = [(k, v) for k, v in scope["headers"] if k == b"host"]
        headers.append((_SESSION_HEADER, session_id))
        delete: Scope = {
            **scope,
            "method": "DELETE",
            "path": self._path,
            "raw_path": self._path.encode(),
            "headers": headers,
            "query_string": b"",
        }
        sent = False

        async def receive() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": b"", "more_body": False}
            return {"type": "http.disconnect"}

        async def discard(_message: Message) -> None:
            return None

        await self._app(delete, receive, discard)

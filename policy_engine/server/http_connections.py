"""uvicorn's HTTP/1.1 protocol with a header deadline and a cap on open connections.

uvicorn times out a keep-alive connection only after a response, and any
byte resets that timer; a connection that never sends a full request is
never closed. So 300 idle connections exhausted a 256-descriptor limit and
locked every client out. Here each connection must complete its request
headers within ``header_timeout`` of connecting (or of its last response),
and a connection past ``max_connections`` is closed as soon as it is
accepted. Both refusals are logged once (see ``rejections``), and so are
uvicorn's own per-request warnings ("Invalid HTTP request received."), which
a flood of garbage would otherwise repeat for every connection.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Literal

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from .limits import TransportLimits
from .rejections import RejectionLog


class _WarnOnce(logging.Filter):
    """Turns uvicorn's repeated plain warnings into one line each, then counts."""

    def __init__(self, rejections: RejectionLog) -> None:
        super().__init__()
        self._rejections = rejections

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.WARNING or record.exc_info:
            return True
        self._rejections.note(record.getMessage().rstrip("."), "reported by uvicorn")
        return False


def guarded_protocol(
    header_timeout: float, max_connections: int, rejections: RejectionLog
) -> type[H11Protocol]:
    """An ``H11Protocol`` class bound to these limits, for ``uvicorn.Config(http=...)``."""
    once = _WarnOnce(rejections)

    class GuardedH11Protocol(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            if once not in self.logger.filters:
                self.logger.addFilter(once)

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            if len(self.connections) > max_connections:
                rejections.note(
                    "refused a connection",
                    f"{max_connections} connections are open (--max-connections)",
                )
                transport.close()
                return
            self._arm_header_timer()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm_header_timer()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state in (h11.SEND_BODY, h11.DONE, h11.MUST_CLOSE):
                self._disarm_header_timer()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm_header_timer()

        def _arm_header_timer(self) -> None:
            self._disarm_header_timer()
            self._header_timer = self.loop.call_later(header_timeout, self._headers_too_slow)

        def _disarm_header_timer(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_too_slow(self) -> None:
            self._header_timer = None
            if self.conn.their_state in (h11.SEND_BODY, h11.DONE) or self.transport.is_closing():
                return
            rejections.note(
                "closed a connection that sent no complete request in time",
                f"limit {header_timeout:g} s (--header-timeout)",
            )
            self.transport.close()

    return GuardedH11Protocol


def guarded_config(
    app: Any,
    limits: TransportLimits,
    rejections: RejectionLog,
    lifespan: Literal["on", "off"],
) -> uvicorn.Config:
    """The uvicorn set-up every HTTP front of ours uses: quiet, bounded, guarded."""
    return uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan=lifespan,
        timeout_graceful_shutdown=2,
        http=guarded_protocol(limits.header_timeout, limits.connections(), rejections),
        timeout_keep_alive=limits.idle_timeout,  # type: ignore[arg-type]
    )

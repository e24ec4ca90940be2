"""The entry points the CLI calls: serve one provider source over stdio or HTTP."""

from __future__ import annotations

from .app import build_server
from .decision_log import DecisionLog
from .fastpath import FastLane
from .http_app import serve_http
from .limits import TransportLimits
from .service import InterceptorService
from .source import ProviderSource
from .stdio import stdio_transport


async def serve_stdio(
    source: ProviderSource,
    *,
    decision_log: DecisionLog | None = None,
    fast_path: bool = True,
    limits: TransportLimits | None = None,
) -> None:
    """Serve MCP on this process's stdin/stdout until stdin closes.

    ``fast_path`` lets the transport answer interceptor calls itself once the
    SDK has done the handshake (see ``fastpath``); turn it off to route every
    request through the SDK. A decision log opened with ``-`` writes to
    stderr, which is safe here: the transport owns stdout. ``limits`` bounds
    the line length and the requests in flight (see ``TransportLimits``).
    """
    limits = limits or TransportLimits()
    service = InterceptorService(source, decision_log)
    server = build_server(source, decision_log, service=service)
    lane = FastLane(service, lambda: server.server_info_stamp) if fast_path else None
    async with stdio_transport(
        lane=lane, max_line_bytes=limits.max_message_bytes, max_in_flight=limits.max_in_flight
    ) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


__all__ = ["serve_http", "serve_stdio"]

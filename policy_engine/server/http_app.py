"""Streamable HTTP serving: the SDK's session manager behind uvicorn.

Defaults lean safe: loopback only, DNS-rebinding protection on (Host and
Origin checked), bearer auth when a token is given. Stateless mode gives each
request a fresh transport so any instance behind a load balancer can answer
any request; responses are plain JSON by default because an invoke never
streams.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Sequence

import anyio
import uvicorn
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp

from .app import build_server
from .auth import BearerTokenMiddleware
from .decision_log import DecisionLog
from .http_errors import RequestErrorRewriter
from .source import ProviderSource

MCP_PATH = "/mcp"
_SHUTDOWN_TIMEOUT = 10.0
_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def _host_pattern(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def security_settings(host: str, allowed_hosts: Sequence[str] = ()) -> TransportSecuritySettings:
    """DNS-rebinding protection that admits loopback, the bound host and ``allowed_hosts``.

    ``allowed_hosts`` entries are Host header values (``name`` or ``name:port``;
    a bare name admits any port), for the names a load balancer forwards.
    """
    names = list(dict.fromkeys([*_LOOPBACK_HOSTS, _host_pattern(host)]))
    hosts = [f"{name}:*" for name in names]
    for extra in allowed_hosts:
        hosts.extend([extra] if ":" in extra.strip("[]") else [extra, f"{extra}:*"])
    origins = [f"{scheme}://{pattern}" for pattern in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


def build_http_app(
    source: ProviderSource,
    *,
    host: str = "127.0.0.1",
    auth_token: str | None = None,
    stateless: bool = False,
    decision_log: DecisionLog | None = None,
    json_response: bool = True,
    allowed_hosts: Sequence[str] = (),
) -> ASGIApp:
    """The ASGI app serving MCP at ``/mcp``; its lifespan runs the SDK session manager."""
    server = build_server(source, decision_log)
    app: ASGIApp = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        json_response=json_response,
        stateless_http=stateless,
        transport_security=security_settings(host, allowed_hosts),
        host=host,
    )
    app = RequestErrorRewriter(app)
    if auth_token is not None:
        app = BearerTokenMiddleware(app, auth_token)
    return app


class _AnnouncingServer(uvicorn.Server):
    """Calls back once the socket accepts connections, so callers need not poll."""

    def __init__(self, config: uvicorn.Config, on_started: Callable[[], None]) -> None:
        super().__init__(config)
        self._on_started = on_started

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            self._on_started()


def _bind(host: str, port: int) -> socket.socket:
    info = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, kind, proto, _, address = info[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(1024)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


async def serve_http(
    source: ProviderSource,
    *,
    host: str = "127.0.0.1",
    port: int,
    auth_token: str | None = None,
    stateless: bool = False,
    decision_log: DecisionLog | None = None,
    ready: Callable[[int], None] | None = None,
    json_response: bool = True,
    allowed_hosts: Sequence[str] = (),
) -> None:
    """Serve until cancelled or signalled; ``ready`` gets the bound port (so port 0 works)."""
    app = build_http_app(
        source,
        host=host,
        auth_token=auth_token,
        stateless=stateless,
        decision_log=decision_log,
        json_response=json_response,
        allowed_hosts=allowed_hosts,
    )
    sock = _bind(host, port)
    bound_port: int = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=2,
    )

    def announce() -> None:
        if ready is not None:
            ready(bound_port)

    try:
        await _serve_until_cancelled(_AnnouncingServer(config, announce), sock)
    finally:
        sock.close()


async def _serve_until_cancelled(server: uvicorn.Server, sock: socket.socket) -> None:
    """Run uvicorn; on cancellation ask it to stop and wait for a clean shutdown.

    Cancelling uvicorn's ``serve`` directly leaves its lifespan task behind
    (and the SDK session manager with it), so the server runs shielded and is
    stopped the way a signal would stop it: ``should_exit``.
    """
    done = anyio.Event()
    shield = anyio.CancelScope(shield=True)

    async def run() -> None:
        try:
            with shield:
                await server.serve(sockets=[sock])
        finally:
            done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        try:
            await done.wait()
        finally:
            server.should_exit = True
            with anyio.CancelScope(shield=True), anyio.move_on_after(_SHUTDOWN_TIMEOUT):
                await done.wait()
            shield.cancel()


__all__ = ["MCP_PATH", "build_http_app", "security_settings", "serve_http"]

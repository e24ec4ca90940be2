"""Streamable HTTP serving: the SDK's session manager behind uvicorn.

Defaults lean safe: loopback only (another address needs auth or an explicit
opt-in), DNS-rebinding protection on (Host and Origin checked, case-blind),
bearer auth when a token is given, and every resource a client holds bounded
(``TransportLimits``: body size and time, header and idle time, connections,
sessions). Stateless mode gives each request a fresh transport so any
instance behind a load balancer can answer any request; responses are plain
JSON by default because an invoke never streams.
"""

from __future__ import annotations

import errno
import ipaddress
import socket
from collections.abc import Callable, Sequence

import anyio
import uvicorn
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp

from policy_engine.observability import metrics

from .app import build_server
from .auth import BearerTokenMiddleware
from .decision_log import DecisionLog
from .http_connections import guarded_config
from .http_guard import RequestGuard
from .http_sessions import SessionLimiter
from .limits import TransportLimits
from .oauth import TokenVerifier
from .rejections import RejectionLog
from .resource_server import ResourceServerMiddleware
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
    Everything is lowercased: the request guard lowercases ``Host`` and
    ``Origin`` too, since host names are case-insensitive.
    """
    names = list(dict.fromkeys([*_LOOPBACK_HOSTS, _host_pattern(host.lower())]))
    hosts = [f"{name}:*" for name in names]
    for extra in (value.lower() for value in allowed_hosts):
        hosts.extend([extra] if ":" in extra.strip("[]") else [extra, f"{extra}:*"])
    origins = [f"{scheme}://{pattern}" for pattern in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


class ListenError(Exception):
    """The HTTP listener cannot start; the message says why, for the operator."""


def build_http_app(
    source: ProviderSource,
    *,
    host: str = "127.0.0.1",
    auth_token: str | None = None,
    stateless: bool = False,
    decision_log: DecisionLog | None = None,
    json_response: bool = True,
    allowed_hosts: Sequence[str] = (),
    limits: TransportLimits | None = None,
    rejections: RejectionLog | None = None,
    verifier: TokenVerifier | None = None,
) -> ASGIApp:
    """The ASGI app serving MCP at ``/mcp``; its lifespan runs the SDK session manager.

    Outermost first: bearer auth (a static token, or OAuth with ``verifier``), the
    request guard (body bounds, strict framing), the session cap, the SDK.
    """
    limits = limits or TransportLimits()
    rejections = rejections or RejectionLog()
    server = build_server(source, decision_log)
    app: ASGIApp = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        json_response=json_response,
        stateless_http=stateless,
        transport_security=security_settings(host, allowed_hosts),
        host=host,
        # The guard enforces the body limit with a JSON-RPC answer; the
        # limiter enforces the session cap with eviction. The SDK's own
        # limits stay as a backstop above ours.
        max_request_body_size=limits.max_message_bytes + 1,
        session_idle_timeout=limits.session_idle_timeout,
        max_sessions=2 * limits.max_sessions,
    )
    if not stateless:
        app = SessionLimiter(
            app,
            max_sessions=limits.max_sessions,
            session_idle_timeout=limits.session_idle_timeout,
            rejections=rejections,
            path=MCP_PATH,
        )
    app = RequestGuard(
        app,
        max_body_bytes=limits.max_message_bytes,
        body_timeout=limits.body_timeout,
        rejections=rejections,
    )
    app = metrics.observed(app, metrics.SCRAPE)
    if auth_token is not None:
        app = BearerTokenMiddleware(app, auth_token)
    if verifier is not None:
        app = ResourceServerMiddleware(app, verifier, bind_sessions=not stateless)
    metrics.policies_loaded()
    return metrics.observed(app, metrics.PROBES)


def is_loopback(host: str) -> bool:
    """Whether every address ``host`` names is a loopback address (``ListenError`` if none)."""
    bare = host.strip("[]")
    if bare.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(bare).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(bare, None, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise ListenError(f"cannot listen on `{host}`: no such host or address") from None
    return all(ipaddress.ip_address(info[4][0]).is_loopback for info in infos)


def listen(
    host: str,
    port: int,
    *,
    auth_configured: bool,
    allow_unauthenticated_remote: bool = False,
    override_flag: str | None = "--allow-unauthenticated-remote",
) -> socket.socket:
    """The bound, listening socket for ``host:port``, or ``ListenError`` saying why not.

    An address other than loopback without auth is refused: an interceptor
    server sits on the path of every tool call, and serving it open to the
    network must be a decision (``allow_unauthenticated_remote``, given on the command
    line as ``override_flag``; ``None`` for a command that has no such flag).
    """
    if not auth_configured and not allow_unauthenticated_remote and not is_loopback(host):
        remedy = "Set --auth-token-env"
        if override_flag is not None:
            remedy += f", or pass {override_flag} if a proxy in front does the authentication"
        raise ListenError(
            f"refusing to serve {host} without auth: it is not a loopback address. {remedy}"
        )
    bare = host.strip("[]")
    try:
        return _bind(bare, port)
    except (socket.gaierror, UnicodeError):
        raise ListenError(f"cannot listen on `{host}`: no such host or address") from None
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise ListenError(f"cannot listen on {host}:{port}: the port is in use") from None
        reason = exc.strerror or type(exc).__name__
        raise ListenError(f"cannot listen on {host}:{port}: {reason}") from None


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
    port: int = 0,
    auth_token: str | None = None,
    stateless: bool = False,
    decision_log: DecisionLog | None = None,
    ready: Callable[[int], None] | None = None,
    json_response: bool = True,
    allowed_hosts: Sequence[str] = (),
    limits: TransportLimits | None = None,
    allow_unauthenticated_remote: bool = False,
    sock: socket.socket | None = None,
    verifier: TokenVerifier | None = None,
) -> None:
    """Serve until cancelled or signalled; ``ready`` gets the bound port (so port 0 works).

    Pass ``sock`` from ``listen`` to report a bind failure before the event
    loop starts; otherwise ``listen`` is called here and may raise
    ``ListenError``. With ``verifier``, its JWKS is loaded first (``AuthConfigError``
    if it cannot be: the server never serves with auth it cannot check).
    """
    if verifier is not None:
        await verifier.start()
    limits = limits or TransportLimits()
    rejections = RejectionLog()
    if sock is None:
        sock = listen(
            host,
            port,
            auth_configured=auth_token is not None or verifier is not None,
            allow_unauthenticated_remote=allow_unauthenticated_remote,
        )
    app = build_http_app(
        source,
        host=host.strip("[]") if host.startswith("[") else host,
        auth_token=auth_token,
        stateless=stateless,
        decision_log=decision_log,
        json_response=json_response,
        allowed_hosts=allowed_hosts,
        limits=limits,
        rejections=rejections,
        verifier=verifier,
    )
    bound_port: int = sock.getsockname()[1]
    config = guarded_config(app, limits, rejections, lifespan="on")

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


__all__ = [
    "MCP_PATH",
    "ListenError",
    "build_http_app",
    "is_loopback",
    "listen",
    "security_settings",
    "serve_http",
]

"""The gateway's streamable HTTP front: one gateway session (and backend session) per client.

Each MCP session the client opens gets the SDK's own streamable HTTP server
transport, so the wire is exactly the SDK's (SSE streams for what relates to a
request, a GET stream for the rest), and a gateway session of its own with its
own backend connections: a backend's per-session state (its handshake, its
subscriptions) is never shared between clients. 2026-07-28 requests, which
have no session, and every request under ``--stateless`` are answered one by
one instead (:mod:`.stateless`). The hardening is the server package's:
loopback by default, Host/Origin checks, bearer-token auth, a body size limit,
idle sessions closed. A session's backends start only once its client has
finished the handshake (``initialize`` is answered from a cache, see
:mod:`.handshakes`), a session that does not finish it within the handshake
deadline is closed, and :class:`.serve.SessionLimits` bounds the sessions per
client address and in all.
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any

import anyio
from anyio.abc import TaskGroup, TaskStatus
from mcp.server.streamable_http import (
    GET_STREAM_KEY,
    MCP_SESSION_ID_HEADER,
    StreamableHTTPServerTransport,
)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from policy_engine.flow import Fingerprinter
from policy_engine.interception import Interception
from policy_engine.observability import metrics
from policy_engine.server.auth import BearerTokenMiddleware
from policy_engine.server.http_app import MCP_PATH, listen, security_settings
from policy_engine.server.http_connections import guarded_config
from policy_engine.server.http_guard import RequestGuard
from policy_engine.server.limits import TransportLimits, message_limit
from policy_engine.server.oauth import TokenVerifier
from policy_engine.server.rejections import RejectionLog
from policy_engine.server.resource_server import ResourceServerMiddleware, current_principal
from policy_engine.wire.constants import INITIALIZE
from policy_engine.wire.errors import INVALID_REQUEST

from .backend import describe
from .handshakes import HandshakeCache
from .serve import GatewayOptions, session_options
from .session import HANDSHAKE_TIMEOUT_S, GatewaySession
from .stateless import ModernFront, SealedInputKeys, SessionSigner, StatelessFront

logger = logging.getLogger("policyc.gateway")


class _Sessions:
    """The ASGI app at ``/mcp``: routes each request to its session's transport."""

    def __init__(
        self,
        options: GatewayOptions,
        interception: Interception,
        tg: TaskGroup,
        limits: TransportLimits,
    ):
        self.options = options
        self.limits = limits
        self.interception = interception
        self.tg = tg
        host = options.listen[0] if options.listen else "127.0.0.1"
        self.security = security_settings(host, options.allowed_hosts)
        self.live: dict[str, StreamableHTTPServerTransport] = {}
        self.clients: dict[str, str] = {}
        """Session id -> the address of the client that opened it."""
        self.handshakes = HandshakeCache()
        key = options.session_key or Fingerprinter()
        input_keys = SealedInputKeys(key)
        self.modern = ModernFront(
            interception,
            lambda: session_options(options, interception, "sessionless", shared=True),
            tg,
            self.security,
            input_keys,
        )
        self.stateless: StatelessFront | None = None
        if options.stateless:
            assert options.session_key is not None, "--stateless needs a session key"
            self.stateless = StatelessFront(
                interception,
                session_options(options, interception, "stateless", shared=True),
                SessionSigner(key),
                self.security,
                input_keys,
            )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].rstrip("/") != MCP_PATH:
            await _plain(send, 404, b"not found")
            return
        headers = dict(scope["headers"])
        version = headers.get(b"mcp-protocol-version")
        if version is not None and version.decode("latin-1") not in HANDSHAKE_PROTOCOL_VERSIONS:
            # As the SDK routes: the version header alone picks the era; the modern
            # front's ladder answers an unknown version with -32022.
            await self.modern(scope, receive, send)
            return
        if self.stateless is not None:
            await self.stateless(scope, receive, send)
            return
        session_id = headers.get(MCP_SESSION_ID_HEADER.lower().encode())
        if session_id is not None:
            transport = self.live.get(session_id.decode("latin-1"))
            if transport is None:
                await _plain(send, 404, b"session not found")
                return
            await transport.handle_request(scope, receive, send)
            return
        if scope["method"] == "POST":
            body = await _read_body(receive)
            if not _is_initialize(body):
                await _rpc_error(
                    send, INVALID_REQUEST, "Bad Request: no session; send initialize first"
                )
                return
            receive = _replay(body, receive)
        client = _client_address(scope)
        refusal = self._refusal(client)
        if refusal is not None:
            await _plain(send, *refusal)
            return
        transport = StreamableHTTPServerTransport(
            mcp_session_id=uuid.uuid4().hex,
            security_settings=self.security,
            idle_timeout=self.limits.session_idle_timeout,
        )
        await self.tg.start(self._run_session, transport, client)
        await transport.handle_request(scope, receive, send)

    def _refusal(self, client: str) -> tuple[int, bytes] | None:
        """Why a new session from ``client`` is refused, if it is (HTTP status, body)."""
        limits = self.options.sessions
        if sum(1 for owner in self.clients.values() if owner == client) >= limits.per_client:
            logger.warning("refused a session: %s has %d open", client, limits.per_client)
            return 429, b"too many sessions from this address"
        if len(self.live) >= limits.max_sessions:
            logger.warning("refused a session: %d open in all", limits.max_sessions)
            return 503, b"too many sessions"
        return None

    async def _run_session(
        self,
        transport: StreamableHTTPServerTransport,
        client: str,
        *,
        task_status: TaskStatus[None],
    ) -> None:
        key = transport.mcp_session_id
        assert key is not None
        self.live[key] = transport
        self.clients[key] = client
        try:
            async with transport.connect() as (read_stream, write_stream):
                task_status.started()
                options = session_options(self.options, self.interception, key)
                options.handshakes = self.handshakes
                options.client_stream_open = lambda: _get_stream_open(transport)
                session = GatewaySession(self.interception, options, write_stream)
                # This task started inside the initialize request: its verified caller
                # owns the session (the auth layer refuses the session to anyone else).
                session.chain.principal = current_principal()
                idle = transport.idle_scope or anyio.CancelScope()
                with idle, anyio.CancelScope() as whole:
                    async with anyio.create_task_group() as watch:
                        watch.start_soon(self._handshake_deadline, session, whole, key)
                        await session.run(read_stream)
                        watch.cancel_scope.cancel()
        except Exception as err:
            logger.error("HTTP session %s failed: %s", key[:8], describe(err))
            logger.debug("HTTP session %s failed", key[:8], exc_info=True)
        else:
            logger.info("HTTP session %s ended", key[:8])
        finally:
            self.live.pop(key, None)
            self.clients.pop(key, None)
            with anyio.CancelScope(shield=True):
                await transport.terminate()

    async def _handshake_deadline(
        self, session: GatewaySession, whole: anyio.CancelScope, key: str
    ) -> None:
        """Close a session whose client has not finished its handshake in time."""
        answering = sum(max(b.timeout_s, HANDSHAKE_TIMEOUT_S) for b in self.options.backends)
        with anyio.move_on_after(answering):
            await session.handshake_answered.wait()
        if session.handshake_answered.is_set():
            with anyio.move_on_after(self.options.sessions.handshake_timeout_s):
                await session.initialized.wait()
                return
        logger.info("HTTP session %s closed: the client did not finish its handshake", key[:8])
        whole.cancel()


def _get_stream_open(transport: StreamableHTTPServerTransport) -> bool:
    """Whether the client's GET stream is open: the SDK's transport drops a message of
    no request while it is not (it has no public test for it, so this reads the
    table its own router reads; an SDK without that table is taken as always open,
    which is how the gateway behaved before it held anything)."""
    streams = getattr(transport, "_request_streams", None)
    return streams is None or GET_STREAM_KEY in streams


def _client_address(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


async def _read_body(receive: Receive) -> bytes:
    """The whole request body (the request guard in front has bounded it)."""
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes, then: Receive) -> Receive:
    """The body once more, then the connection's own events (its disconnect)."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return await then()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


def _is_initialize(body: bytes) -> bool:
    try:
        message = json.loads(body)
    except ValueError:
        return False
    return isinstance(message, dict) and message.get("method") == INITIALIZE


async def _rpc_error(send: Send, code: int, message: str, data: Any = None) -> None:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 400,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _plain(send: Send, status: int, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain")],
        }
    )
    await send({"type": "http.response.body", "body": body})


def build_app(
    options: GatewayOptions,
    interception: Interception,
    tg: TaskGroup,
    limits: TransportLimits,
    rejections: RejectionLog,
    verifier: TokenVerifier | None = None,
) -> tuple[ASGIApp, _Sessions]:
    """Outermost first: bearer auth, the request guard (body bounds, strict framing), sessions."""
    sessions = _Sessions(options, interception, tg, limits)
    app: ASGIApp = sessions
    app = RequestGuard(
        app,
        max_body_bytes=limits.max_message_bytes,
        body_timeout=limits.body_timeout,
        rejections=rejections,
    )
    app = metrics.observed(app, metrics.SCRAPE)
    if options.auth_token is not None:
        app = BearerTokenMiddleware(app, options.auth_token)
    if verifier is not None:
        app = ResourceServerMiddleware(app, verifier, bind_sessions=not options.stateless)
    return metrics.observed(app, metrics.PROBES), sessions


async def serve_http(options: GatewayOptions, interception: Interception) -> str | None:
    """Serve until cancelled or signalled; the fatal reason, if a stateless front's
    backends stopped for good (the replica exits, for its supervisor to restart)."""
    from policy_engine.server.http_app import _AnnouncingServer, _serve_until_cancelled

    assert options.listen is not None
    host, port = options.listen
    limits = TransportLimits(max_message_bytes=message_limit(options.max_payload_bytes))
    rejections = RejectionLog()
    verifier = options.oauth.verifier() if options.oauth is not None else None
    if verifier is not None:
        await verifier.start()  # fail closed: no keys, no serving
    authenticated = options.auth_token is not None or verifier is not None
    sock = listen(host, port, auth_configured=authenticated, override_flag=None)
    bound: int = sock.getsockname()[1]
    fatal: list[str] = []
    async with anyio.create_task_group() as tg:
        app, sessions = build_app(options, interception, tg, limits, rejections, verifier)

        def stop(reason: str) -> None:
            fatal.append(reason)
            tg.cancel_scope.cancel()

        if sessions.stateless is not None:
            await sessions.stateless.start(tg, stop)
        config = guarded_config(app, limits, rejections, lifespan="off")

        def announce() -> None:
            logger.info("serving on http://%s:%d%s", host, bound, MCP_PATH)

        try:
            await _serve_until_cancelled(_AnnouncingServer(config, announce), sock)
        finally:
            sock.close()
            tg.cancel_scope.cancel()
    return fatal[0] if fatal else None


__all__ = ["build_app", "serve_http"]

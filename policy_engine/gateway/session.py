"""One client connection through the gateway: every message, both ways, through the chain.

The front is any pair of SDK message streams (the stdio transport, or one
streamable HTTP session). Each client request runs in a task of its own so a
slow call never holds up the others; a ``notifications/cancelled`` cancels
that task, which cancels the request on the backend too, and a cancelled
request gets no answer (as MCP asks). Every other request gets exactly one.

A front without sessions (``shared``) multiplexes many callers into one
session: it submits each request with the caller's own view of the chain,
which the request's task carries (a context variable) into everything the
request causes, such as the listing that learns what a filter hides.

The session reads the client and answers its requests; its parts each do one
job: :mod:`.routing` finds a request's backend (:mod:`.listing` fetches the
lists that routing and filtering need), :mod:`.lifecycle` starts the backends,
handshakes and restarts them, :mod:`.backend_traffic` carries what the
backends send towards the client.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

import anyio
from anyio.abc import TaskGroup
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from mcp_types import (
    LOG_LEVEL_META_KEY,
    PROTOCOL_VERSION_META_KEY,
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
)

from policy_engine.interception import Forward, Interception, InterceptionSession, Refuse
from policy_engine.observability import metrics
from policy_engine.observability.tracing import Tracing
from policy_engine.observability.tracing import active as active_tracing
from policy_engine.server import InterceptorService
from policy_engine.wire import InterceptorError
from policy_engine.wire.constants import (
    CANCELLED,
    HANDSHAKE_METHODS,
    INITIALIZED,
    method_label,
)
from policy_engine.wire.errors import INTERNAL_ERROR
from policy_engine.wire.tracecontext import from_meta

from .backend import ORIGIN, BackendError, BackendSpec
from .backend_traffic import BackendTraffic
from .eras import is_modern, modern_result
from .handshakes import HandshakeCache
from .held import ClientStream
from .lifecycle import HANDSHAKE_TIMEOUT_S as HANDSHAKE_TIMEOUT_S
from .lifecycle import SessionBackends
from .reply import Reply, error_reply
from .routing import Router
from .scope import SCOPE, OpenRequests, RequestScope

logger = logging.getLogger("policyc.gateway")

_DRAIN_S = 5.0


@dataclass
class SessionOptions:
    backends: list[BackendSpec]
    expose_interceptors: bool = False
    session_id: str | None = None
    errlog: TextIO | None = None
    on_fatal: Callable[[str], None] | None = None
    interceptor_capability: dict[str, Any] = field(default_factory=dict)
    service: InterceptorService | None = None
    """Answers the SEP methods itself (``--expose-interceptors``); else they are forwarded."""
    back_channel: bool = True
    """Whether requests from a backend can reach the client. A stateless front has no
    session stream to carry them: they are refused, and the backend is told why."""
    client_stream_open: Callable[[], bool] | None = None
    """Whether the client's stream for messages of no request is open (an HTTP
    session's GET stream); a backend's request waits for it (:mod:`.held`).
    ``None``: always (stdio)."""
    handshakes: HandshakeCache | None = None
    """Start the backends lazily: answer ``initialize`` from this cache and start them
    when the client sends ``notifications/initialized`` (an HTTP session, which any
    client can open); without it they start with the session."""


class GatewaySession:
    """Routes one client's traffic to its backends, with the chain on every message."""

    def __init__(self, interception: Interception, options: SessionOptions, front_write: Any):
        self.options = options
        self.chain = InterceptionSession(interception, session_id=options.session_id)
        self._front = front_write
        self._open = OpenRequests()
        self.rootless: set[str] = set()
        """Backends that asked for roots where no session stream can answer: refused."""
        self._traffic = BackendTraffic(
            self.chain,
            self._open,
            self._send_front,
            back_channel=options.back_channel,
            rootless=self.rootless,
            client_stream=ClientStream(options.client_stream_open),
        )
        self._backends = SessionBackends(
            options, self._traffic.request, self._traffic.notification, self._open, self._stop
        )
        self._router = Router(self._backends, self.chain, options.service, self.rootless)
        self._tg: TaskGroup | None = None
        self._requests: TaskGroup | None = None
        self.ready = anyio.Event()
        """Set once the session reads requests and :meth:`submit` may be called."""
        self.handshake_answered = self._backends.handshake_answered
        self.initialized = anyio.Event()
        """Set when the client sends ``notifications/initialized``: the handshake is done."""
        self.fatal: str | None = None

    # the session's life

    async def run(self, front_read: Any) -> None:
        metrics.session_opened()
        try:
            await self._run(front_read)
        finally:
            metrics.session_closed()
            self._backends.close()  # also when cancelled: ended, not down (readiness)

    async def _run(self, front_read: Any) -> None:
        async with anyio.create_task_group() as tg:
            self._tg = self._backends.tg = tg
            if self.options.handshakes is None:
                await self._backends.connect_all(ready=True)
            async with anyio.create_task_group() as requests:
                self._requests = requests
                self.ready.set()
                await self._read_front(front_read, requests)
                await self._open.drain(_DRAIN_S)
                requests.cancel_scope.cancel()
            self._backends.close()

    async def _read_front(self, front_read: Any, requests: TaskGroup) -> None:
        """Every client message until the client leaves; an HTTP client's DELETE closes
        the stream under the reader, which is a leaving like any other."""
        try:
            async for item in front_read:
                if isinstance(item, Exception):
                    continue
                await self._client_message(item.message, requests)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            logger.debug("the client closed the session")

    def _stop(self, reason: str) -> None:
        self.fatal = reason
        if self.options.on_fatal is not None:
            self.options.on_fatal(reason)
        if self._tg is not None:
            self._tg.cancel_scope.cancel()

    # client -> gateway

    async def _client_message(self, message: JSONRPCMessage, requests: TaskGroup) -> None:
        if isinstance(message, JSONRPCRequest):
            logger.debug("client -> %s (id %s)", message.method, message.id)
            scope = anyio.CancelScope()
            self._open.inflight[message.id] = scope
            if message.method in HANDSHAKE_METHODS:
                # Inline, as the SDK does: nothing the client sends after the
                # handshake (notifications/initialized first) may overtake it.
                await self._serve_request(message, scope)
            else:
                requests.start_soon(self._serve_request, message, scope)
        elif isinstance(message, JSONRPCResponse | JSONRPCError):
            self._traffic.client_answered(message)
        else:
            await self._client_notification(message)

    async def _client_notification(self, message: JSONRPCNotification) -> None:
        logger.debug("client -> notification %s", message.method)
        params = message.params
        if message.method == CANCELLED:
            scope = self._open.inflight.get((params or {}).get("requestId"))  # type: ignore[arg-type]
            if scope is not None:
                scope.cancel()
            return
        lazy = message.method == INITIALIZED and not self._backends.started
        if message.method == INITIALIZED:
            self.initialized.set()
        outcome = await self.chain.notification(
            message.method, params, origin="client", server=None
        )
        if isinstance(outcome, Refuse):
            logger.info("dropped client notification %s: blocked by policy", message.method)
        if lazy and self._tg is not None:
            self._tg.start_soon(
                self._backends.start_late, outcome if isinstance(outcome, Forward) else None
            )
            return
        if self._backends.start_failed and message.method == INITIALIZED:
            self._stop("the session's backends could not be started")
        if isinstance(outcome, Refuse) or self._backends.start_failed:
            return
        for backend in self._backends.order:
            await backend.notify(message.method, outcome.payload)

    def submit(self, request: JSONRPCRequest, view: InterceptionSession) -> None:
        """Serve one request for a front that multiplexes callers (ids already unique),
        with that caller's own view of the chain."""
        assert self._requests is not None, "submit before the session is ready"
        scope = anyio.CancelScope()
        self._open.inflight[request.id] = scope
        self._requests.start_soon(self._serve_request, request, scope, view)

    def cancel(self, request_id: RequestId) -> None:
        scope = self._open.inflight.get(request_id)
        if scope is not None:
            scope.cancel()

    async def open_handshake(self, params: dict[str, Any]) -> dict[str, Any]:
        """The gateway's own ``initialize`` with every backend, for a front whose clients
        share these connections; the (merged) result answers their handshakes."""
        return await self._backends.open_handshake(params)

    async def settle(self) -> None:
        """A ping to every backend, so that what they ask right after the handshake
        (their roots) has arrived."""
        await self._backends.settle()

    async def _serve_request(
        self,
        request: JSONRPCRequest,
        scope: anyio.CancelScope,
        view: InterceptionSession | None = None,
    ) -> None:
        reply = Reply(error=ErrorData(code=INTERNAL_ERROR, message="Internal error"))
        meta = (request.params or {}).get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if isinstance(token, str | int):
            self._open.progress[token] = request.id
        envelope = None
        if isinstance(meta, dict) and PROTOCOL_VERSION_META_KEY in meta:
            envelope = {k: v for k, v in meta.items() if k != "progressToken"}
            if LOG_LEVEL_META_KEY in meta:
                self._open.logging[request.id] = envelope
        entered = SCOPE.set(RequestScope(view or self.chain, envelope))
        origin = ORIGIN.set(request.id)
        with scope:
            tracing = active_tracing()
            if tracing is None:
                reply = await self._answer(request.method, request.params)
            else:
                reply = await self._traced_answer(tracing, request.method, request.params, meta)
        SCOPE.reset(entered)
        ORIGIN.reset(origin)
        if reply.result is not None and is_modern(request.params):
            reply.result = modern_result(request.method, reply.result)
        self._open.inflight.pop(request.id, None)
        self._open.logging.pop(request.id, None)
        if token is not None:
            self._open.progress.pop(token, None)
        if scope.cancelled_caught:
            return  # the client cancelled it: MCP says it is not answered
        message: JSONRPCMessage
        if reply.error is not None:
            message = JSONRPCError(jsonrpc="2.0", id=request.id, error=reply.error)
        else:
            message = JSONRPCResponse.model_construct(
                jsonrpc="2.0", id=request.id, result=reply.result or {}
            )
        await self._send_front(message)

    async def _traced_answer(
        self, tracing: Tracing, method: str, params: dict[str, Any] | None, meta: object
    ) -> Reply:
        """:meth:`_answer` under a ``gateway <method>`` span, the client's trace its parent."""
        known = method_label(method)
        attributes = {"rpc.system": "jsonrpc", "rpc.method": known}
        with tracing.request(f"gateway {known}", attributes, from_meta(meta)) as span:
            reply = await self._answer(method, params)
            if reply.error is not None:
                span.set({"rpc.jsonrpc.error_code": reply.error.code})
            return reply

    async def _answer(self, method: str, params: dict[str, Any] | None) -> Reply:
        """The reply to one client request: every failure is a JSON-RPC error."""
        try:
            if method in HANDSHAKE_METHODS:
                return await self._backends.handshake_with(method, params)
            return await self._router.handle(method, params)
        except InterceptorError as err:
            return error_reply(err)
        except BackendError as err:
            return Reply(error=err.error)
        except Exception as err:
            logger.exception("gateway failed on %s", method)
            return Reply(
                error=ErrorData(
                    code=INTERNAL_ERROR,
                    message="Internal error",
                    data={"reason": type(err).__name__},
                )
            )

    async def _send_front(self, message: JSONRPCMessage, related: RequestId | None = None) -> None:
        """Write to the client; ``related`` names the client request a message belongs
        to, which the HTTP front needs to put it on that request's stream."""
        metadata = (
            ServerMessageMetadata(related_request_id=related) if related is not None else None
        )
        try:
            await self._front.send(SessionMessage(message, metadata=metadata))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            logger.debug("client gone; dropped a message")

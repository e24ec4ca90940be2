"""One backend MCP server, spoken to at the JSON-RPC message level.

The gateway numbers its own requests to the backend (the client's ids never
reach it), so answers, cancellations and progress can be matched whatever ids
the client chose. The transport (a stdio subprocess, or streamable HTTP) lives
in a task of its own: a backend that dies ends that task, fails every request
still waiting on it with a clean error, and tells the owner, which restarts it
or stops the gateway. A message that cannot be written (a lone surrogate) is
its sender's error, answered to that sender alone: never a backend fault.
"""

from __future__ import annotations

import itertools
import logging
import math
import shlex
import sys
from collections.abc import Awaitable, Callable, Coroutine
from contextlib import AsyncExitStack
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TextIO
from urllib.parse import urlsplit

import anyio
from anyio.abc import TaskGroup, TaskStatus
from mcp.shared.inbound import (
    MCP_METHOD_HEADER,
    MCP_NAME_HEADER,
    MCP_PROTOCOL_VERSION_HEADER,
    NAME_BEARING_METHODS,
    encode_header_value,
)
from mcp.shared.message import ClientMessageMetadata, SessionMessage
from mcp_types import (
    PROTOCOL_VERSION_META_KEY,
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from policy_engine.chain.stdio_transport import unwritable, unwritable_request
from policy_engine.chain.transports import client_transport
from policy_engine.observability import metrics, tracing
from policy_engine.wire import InterceptorError
from policy_engine.wire.constants import CANCELLED
from policy_engine.wire.errors import INTERNAL_ERROR, REQUEST_TIMEOUT

logger = logging.getLogger("policyc.gateway")

OnExit = Literal["restart", "exit"]
DEFAULT_TIMEOUT_S = 60.0


ORIGIN: ContextVar[RequestId | None] = ContextVar("gateway_origin", default=None)
"""The client's id of the request being served, which a backend request it causes
records, so a backend's reference to its own request id can be told to the client."""


LONG_LIVED = frozenset({"subscriptions/listen"})
"""Requests a backend answers only when they end (a listen stream's graceful close): no
timeout applies; the client ends them by cancelling, or the backend by answering."""


class BackendConfigError(ValueError):
    """A backend entry cannot be used as written."""


@dataclass(frozen=True)
class BackendSpec:
    """How to reach one backend and what to do when it fails."""

    name: str
    command: tuple[str, ...] | None = None
    url: str | None = None
    bearer_token: str | None = field(default=None, repr=False)
    env: dict[str, str] | None = None
    cwd: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    on_exit: OnExit = "restart"
    max_restarts: int = 3

    def __post_init__(self) -> None:
        if not self.name or any(c in self.name for c in " /=") or "__" in self.name:
            raise BackendConfigError(
                f"backend name `{self.name}` must be non-empty, without spaces, `/`, `=` or `__`"
            )
        if (self.command is None) == (self.url is None):
            raise BackendConfigError(f"backend `{self.name}` needs exactly one of command or url")
        if self.command is not None and not self.command:
            raise BackendConfigError(f"backend `{self.name}` has an empty command")
        if self.url is not None and urlsplit(self.url).scheme not in ("http", "https"):
            raise BackendConfigError(f"backend `{self.name}` url must be http or https")
        if not self.timeout_s > 0:
            raise BackendConfigError(f"backend `{self.name}` timeout must be positive")
        if self.on_exit not in ("restart", "exit"):
            raise BackendConfigError(f"backend `{self.name}` on_exit must be restart or exit")

    def with_env(self, added: dict[str, str]) -> BackendSpec:
        """This spec with ``added`` to its environment (a stdio backend's; a URL has none)."""
        if self.command is None:
            return self
        return replace(self, env={**(self.env or {}), **added})

    @classmethod
    def parse(cls, text: str, **options: Any) -> BackendSpec:
        """``NAME=COMMAND LINE`` or ``NAME=URL``."""
        name, sep, target = text.partition("=")
        if not sep or not target.strip():
            raise BackendConfigError(f"--backend wants NAME=COMMAND or NAME=URL, not `{text}`")
        target = target.strip()
        if urlsplit(target).scheme in ("http", "https"):
            return cls(name=name.strip(), url=target, **options)
        return cls(name=name.strip(), command=tuple(shlex.split(target)), **options)


class BackendError(Exception):
    """The backend answered with a JSON-RPC error: passed to the client unchanged."""

    def __init__(self, error: ErrorData) -> None:
        super().__init__(error.message)
        self.error = error


class BackendGone(Exception):
    """The backend's connection ended (it exited, or its transport broke)."""


@dataclass
class _Pending:
    done: anyio.Event = field(default_factory=anyio.Event)
    message: JSONRPCResponse | JSONRPCError | None = None
    malformed: str | None = None
    """Why the backend's answer to this request could not be used, if it could not."""


RequestHandler = Callable[["Backend", JSONRPCRequest], Coroutine[Any, Any, None]]
NotificationHandler = Callable[["Backend", JSONRPCNotification], Awaitable[None]]
ExitHandler = Callable[["Backend", str], Awaitable[None]]


class Backend:
    """A live connection to one backend; reconnect with :meth:`connect` after it ended."""

    def __init__(
        self,
        spec: BackendSpec,
        *,
        on_request: RequestHandler,
        on_notification: NotificationHandler,
        on_exit: ExitHandler,
        errlog: TextIO | None = None,
    ) -> None:
        self.spec = spec
        self.name = spec.name
        self._on_request = on_request
        self._on_notification = on_notification
        self._on_exit = on_exit
        self._errlog = errlog
        self._ids = itertools.count(1)
        self._pending: dict[RequestId, _Pending] = {}
        self._origins: dict[RequestId, RequestId] = {}
        self._write: Any = None
        self._stop = anyio.Event()
        self._closing = False
        self.alive = False
        self.restarts = 0
        self.garbage = 0
        metrics.watch_backend(self)

    @property
    def closing(self) -> bool:
        """Closed on purpose (its session ended): neither up nor down for readiness."""
        return self._closing

    # lifecycle

    async def connect(self, tg: TaskGroup) -> None:
        """Open the transport in a task of ``tg``; returns once messages can be sent."""
        self._stop = anyio.Event()
        with tracing.detached():  # the task copies the context: not the caller's span
            await tg.start(self._own_transport)

    def close(self) -> None:
        self._closing = True
        self._stop.set()

    async def _own_transport(self, *, task_status: TaskStatus[None]) -> None:
        reason = "connection closed"
        started = False
        try:
            async with AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport(stack))
                self._write = write
                self.alive = True
                started = True
                task_status.started()
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._read_loop, read, tg)
                    await self._stop.wait()
                    tg.cancel_scope.cancel()
        except Exception as err:
            if not started:
                raise
            reason = describe(err)
        finally:
            self.alive = False
            self._write = None
            self._fail_pending()
        if not self._closing:
            await self._on_exit(self, reason)

    def _transport(self, stack: AsyncExitStack) -> Any:
        return client_transport(stack, self.spec, self._errlog or sys.stderr)

    async def _read_loop(self, read: Any, tg: TaskGroup) -> None:
        async for item in read:
            if isinstance(item, Exception):
                self.garbage += 1
                logger.warning("backend %s sent an unreadable message: %s", self.name, item)
                self._malformed(_answered_id(item), "not a valid JSON-RPC response")
                continue
            message = item.message
            if isinstance(message, JSONRPCResponse | JSONRPCError):
                pending = self._pending.get(message.id) if message.id is not None else None
                if pending is not None:
                    pending.message = message
                    pending.done.set()
                else:
                    self._malformed(message.id, "an id of the wrong type")
            elif isinstance(message, JSONRPCRequest):
                tg.start_soon(self._on_request, self, message)
            else:
                await self._on_notification(self, message)
        # The transport ended by itself: the backend is gone.
        self._stop.set()
        raise BackendGone("the backend closed its connection")

    def _malformed(self, answered: Any, reason: str) -> None:
        """Fail at once the request a malformed answer was meant for, when its id (or
        the same number sent back as text) names one; the client is told why."""
        if answered is None or isinstance(answered, bool):
            return
        pending = self._pending.get(answered)
        if pending is None and isinstance(answered, str) and answered.isdigit():
            pending = self._pending.get(int(answered))
        if pending is None or pending.done.is_set():
            logger.warning("backend %s answered a request it was not sent", self.name)
            return
        pending.malformed = reason
        pending.done.set()

    def _fail_pending(self) -> None:
        for pending in self._pending.values():
            pending.done.set()

    # traffic

    async def send(self, message: JSONRPCMessage) -> None:
        if self._write is None:
            raise BackendGone("the backend is not connected")
        if self.spec.url is not None and (why := unwritable(message)) is not None:
            # One client's unwritable message is that client's error; handed to the
            # SDK's HTTP writer it would end the writer, and the backend with it.
            if isinstance(message, JSONRPCRequest):
                raise BackendError(unwritable_request(message, why).error)
            logger.warning("dropped a message for backend %s: %s", self.name, why["reason"])
            return
        metadata = None
        if self.spec.url is not None and isinstance(message, JSONRPCRequest):
            headers = modern_headers(message.method, message.params)
            metadata = ClientMessageMetadata(headers=headers) if headers else None
        try:
            await self._write.send(SessionMessage(message, metadata=metadata))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as err:
            raise BackendGone("the backend's connection is closed") from err

    async def request(
        self, method: str, params: dict[str, Any] | None, *, timeout_s: float | None = None
    ) -> dict[str, Any]:
        """The backend's result. Raises BackendError for the backend's own error, and
        InterceptorError for a gateway-side failure (timeout, backend gone).

        Cancelling the caller cancels the request on the backend too.
        """
        request_id = next(self._ids)
        pending = _Pending()
        self._pending[request_id] = pending
        origin = ORIGIN.get()
        if origin is not None:
            self._origins[request_id] = origin
        limit = timeout_s or (math.inf if method in LONG_LIVED else self.spec.timeout_s)
        try:
            request = JSONRPCRequest.model_construct(
                jsonrpc="2.0", id=request_id, method=method, params=params
            )
            if params is None:
                request = JSONRPCRequest.model_construct(
                    jsonrpc="2.0", id=request_id, method=method
                )
            try:
                await self.send(request)
                with anyio.fail_after(limit):
                    await pending.done.wait()
            except TimeoutError:
                metrics.backend_error(self.name, "timeout")
                await self._cancel(request_id, "timed out in the gateway")
                raise InterceptorError(
                    REQUEST_TIMEOUT,
                    "Backend request timed out",
                    {"server": self.name, "timeoutMs": int(limit * 1000)},
                ) from None
            except BackendGone as gone:
                metrics.backend_error(self.name, "unavailable")
                raise self.unavailable(str(gone)) from None
            except anyio.get_cancelled_exc_class():
                with anyio.CancelScope(shield=True), anyio.move_on_after(1):
                    await self._cancel(request_id, "cancelled by the client")
                raise
            message = pending.message
            if pending.malformed is not None:
                raise InterceptorError(
                    INTERNAL_ERROR,
                    "Malformed backend answer",
                    {"server": self.name, "reason": pending.malformed},
                )
            if message is None:
                metrics.backend_error(self.name, "unavailable")
                raise self.unavailable("the backend exited before answering")
            if isinstance(message, JSONRPCError):
                metrics.backend_error(self.name, "error")
                raise BackendError(message.error)
            return message.result
        finally:
            self._pending.pop(request_id, None)
            self._origins.pop(request_id, None)

    def sole_origin(self) -> RequestId | None:
        """The client's id of the one request open here, if one alone is (and a client's)."""
        if len(self._pending) != 1:
            return None
        return self._origins.get(next(iter(self._pending)))

    def origin_of(self, request_id: Any) -> RequestId | None:
        """The client's id for a request of ours still open, if a client's caused it."""
        if isinstance(request_id, bool) or not isinstance(request_id, int | str):
            return None
        return self._origins.get(request_id)

    async def notify(self, method: str, params: dict[str, Any] | None) -> None:
        if params is None:
            message = JSONRPCNotification.model_construct(jsonrpc="2.0", method=method)
        else:
            message = JSONRPCNotification.model_construct(
                jsonrpc="2.0", method=method, params=params
            )
        try:
            await self.send(message)
        except BackendGone:
            logger.info("dropped %s for backend %s: not connected", method, self.name)

    async def answer(
        self, request_id: RequestId, result: dict[str, Any] | None, error: ErrorData | None
    ) -> None:
        """Answer a request the backend sent (sampling, elicitation, roots)."""
        message: JSONRPCMessage
        if error is not None:
            message = JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
        else:
            message = JSONRPCResponse.model_construct(
                jsonrpc="2.0", id=request_id, result=result or {}
            )
        try:
            await self.send(message)
        except BackendGone:
            logger.info("could not answer backend %s: not connected", self.name)

    async def _cancel(self, request_id: RequestId, reason: str) -> None:
        await self.notify(CANCELLED, {"requestId": request_id, "reason": reason})

    def unavailable(self, reason: str) -> InterceptorError:
        return InterceptorError(
            INTERNAL_ERROR, "Backend unavailable", {"server": self.name, "reason": reason}
        )


def modern_headers(method: str, params: dict[str, Any] | None) -> dict[str, str]:
    """The routing headers a 2026-07-28 request needs over streamable HTTP (none for the
    handshake era): its envelope's version, its method, and the name it bears."""
    meta = (params or {}).get("_meta")
    version = meta.get(PROTOCOL_VERSION_META_KEY) if isinstance(meta, dict) else None
    if version not in MODERN_PROTOCOL_VERSIONS:
        return {}
    headers = {MCP_PROTOCOL_VERSION_HEADER: str(version), MCP_METHOD_HEADER: method}
    key = NAME_BEARING_METHODS.get(method)
    name = (params or {}).get(key) if key is not None else None
    if isinstance(name, str):
        headers[MCP_NAME_HEADER] = encode_header_value(name)
    return headers


def _answered_id(err: Exception) -> Any:
    """The id of a response that failed validation, if the error kept the message (a
    pydantic error keeps it as the input of the fields it lacked for another kind)."""
    errors = getattr(err, "errors", None)
    if not callable(errors):
        return None
    try:
        found = errors()
    except Exception:
        return None
    for entry in found:
        value = entry.get("input") if isinstance(entry, dict) else None
        if isinstance(value, dict) and "id" in value and "method" not in value:
            return value["id"]
    return None


def describe(err: BaseException) -> str:
    """One line for an error that may be a (nested) exception group."""
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    text = str(err)
    return f"{type(err).__name__}: {text}" if text else type(err).__name__

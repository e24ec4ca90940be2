"""A remote interceptor server seen as an ``InterceptorProvider``.

One MCP client session per server, opened lazily and reused by every
execution. The session lives in a task of its own (owned by this provider's
async context), never in the caller's task: the SDK's transports run task
groups, and a transport failure (a killed process, a refused HTTP connection)
would otherwise cancel whichever chain happened to be calling.

When the connection breaks, the session is dropped and the call is sent once
more on a fresh session, so a server that crashed or was restarted is picked
up by the very next invocation; a second failure is reported, not retried.
A fresh session lists the interceptors again before its first invoke, and a
message the chain can no longer run as it was built fails closed
(rediscovery.py says what counts).
"""

from __future__ import annotations

import logging
import sys
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self, TextIO

import anyio
import mcp_types as types
from anyio.abc import TaskGroup, TaskStatus
from mcp import Client
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from policy_engine.wire import (
    InterceptorDescriptor,
    InterceptorError,
    InvokeParams,
    InvokeResult,
    ListInterceptorsResult,
    MutationResult,
    ValidationResult,
)
from policy_engine.wire.constants import INVOKE_METHOD, LIST_METHOD
from policy_engine.wire.errors import INTERNAL_ERROR, timed_out
from policy_engine.wire.provider import ProviderTraits

from .rediscovery import Drift, compare, drift_error
from .servers import ServerSpec
from .transports import client_transport

logger = logging.getLogger(__name__)


# The SDK reports a dropped transport as -32000 with no data. The SEP's timeout
# error shares that code but always carries data, so data tells them apart.
_CONNECTION_CLOSED = types.CONNECTION_CLOSED
# Envelope keys the 2026 protocol adds to every result; they are not SEP fields.
_ENVELOPE_KEYS = ("resultType", "_meta")
_INVOKE_RESULT: TypeAdapter[ValidationResult | MutationResult] = TypeAdapter(InvokeResult)
# connect/write limits for HTTP; the read side is bounded by the chain's timeouts.
# How long closing may take (a stdio server exiting, an HTTP session DELETE).
_CLOSE_GRACE_S = 5.0
# The deadline of an invoke that names none: a hung server (or one answering
# garbage) must not hold a message forever.
DEFAULT_REMOTE_TIMEOUT_MS = 30_000
# The messages of the errors that mean "no answer from the server at all".
UNREACHABLE = "Interceptor server unreachable"
CONNECTION_LOST = "Interceptor server connection lost"


def is_connection_failure(error: InterceptorError) -> bool:
    """Whether ``error`` says the server could not be reached, rather than what it answered."""
    return error.message in (UNREACHABLE, CONNECTION_LOST) and "server" in (error.data or {})


class _RawResult(BaseModel):
    """Takes any JSON object: the SDK validates results into a model, we want the dict."""

    model_config = ConfigDict(extra="allow")


class _ConnectionLost(Exception):
    pass


@dataclass(eq=False)
class _Connection:
    client: Client
    stop: anyio.Event = field(default_factory=anyio.Event)
    done: anyio.Event = field(default_factory=anyio.Event)
    alive: bool = True
    # How this session's `interceptors/list` differs from the chain's (None: not listed yet).
    drift: Drift | None = None

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        request = types.Request[dict[str, Any] | None, str](method=method, params=params)
        try:
            raw = await self.client.session.send_request(request, _RawResult)
        except MCPError as err:
            if err.code == _CONNECTION_CLOSED and err.data is None:
                raise _ConnectionLost(err.message) from err
            raise
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as err:
            raise _ConnectionLost(str(err) or type(err).__name__) from err
        body = dict(raw.model_extra or {})
        for key in _ENVELOPE_KEYS:
            body.pop(key, None)
        return body


class RemoteProvider:
    """Invokes the interceptors of one MCP server over stdio or streamable HTTP.

    Use as an async context manager: it owns the connection's lifetime. Call
    :meth:`discover` once before :meth:`descriptors`.
    """

    # The payload is only serialized onto the wire, never changed.
    traits = ProviderTraits(never_modifies_payload=True)

    def __init__(
        self,
        spec: ServerSpec,
        *,
        errlog: TextIO | None = None,
        default_timeout_ms: int = DEFAULT_REMOTE_TIMEOUT_MS,
    ) -> None:
        self.spec = spec
        self._errlog = errlog
        self.default_timeout_ms = default_timeout_ms
        self._descriptors: list[InterceptorDescriptor] | None = None
        self._types: dict[str, str] = {}
        self._conn: _Connection | None = None
        self._live: set[_Connection] = set()
        self._lock = anyio.Lock()
        self._tg: TaskGroup | None = None

    @property
    def id(self) -> str:
        return self.spec.id

    async def __aenter__(self) -> Self:
        tg = anyio.create_task_group()
        await tg.__aenter__()
        self._tg = tg
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Close the session politely (bounded), whatever is propagating.

        The task group is left as if nothing were propagating: anyio would
        otherwise wrap the caller's own exception in an ExceptionGroup.
        """
        tg, self._tg = self._tg, None
        await self.close()
        if tg is not None:
            tg.cancel_scope.cancel()
            await tg.__aexit__(None, None, None)

    async def close(self) -> None:
        """End every session this provider holds and wait (bounded) until they are gone.

        Safe to call from any task, so a chain can close all its servers at once.
        """
        self._conn = None
        for conn in self._live:
            conn.stop.set()
        with anyio.move_on_after(_CLOSE_GRACE_S):
            for conn in list(self._live):
                await conn.done.wait()

    async def discover(self) -> list[InterceptorDescriptor]:
        """Fetch and cache the server's ``interceptors/list``."""
        listed = self._listing(await self._request(LIST_METHOD, {}))
        self._descriptors = list(listed.interceptors)
        self._types = {d.name: d.type for d in listed.interceptors}
        return list(self._descriptors)

    def _listing(self, raw: dict[str, Any]) -> ListInterceptorsResult:
        try:
            return ListInterceptorsResult.model_validate(raw)
        except ValidationError as err:
            raise InterceptorError(
                INTERNAL_ERROR,
                "Invalid interceptors/list result",
                {"server": self.id, "reason": _first_error(err)},
            ) from None

    async def _rediscover(self, conn: _Connection, params: InvokeParams) -> None:
        """List again on a session that has not listed yet; refuse what drifted."""
        known = self._descriptors
        if known is None:
            return
        if conn.drift is None:
            listed = self._listing(await conn.request(LIST_METHOD, {}))
            conn.drift = compare(known, listed.interceptors)
            if conn.drift.changed or conn.drift.added:
                logger.warning(
                    "interceptor server %s changed its interceptors after reconnecting", self.id
                )
        reason = conn.drift.conflict(params.name, params.event, params.phase)
        if reason is not None:
            raise drift_error(self.id, params.name, reason)

    def descriptors(self) -> list[InterceptorDescriptor]:
        if self._descriptors is None:
            raise RuntimeError(f"interceptor server `{self.id}` has not been discovered yet")
        return list(self._descriptors)

    async def invoke(self, params: InvokeParams) -> ValidationResult | MutationResult:
        """One ``interceptor/invoke``, under its ``timeoutMs`` or the provider's default."""
        limit = params.timeout_ms or self.default_timeout_ms
        try:
            with anyio.fail_after(limit / 1000):
                raw = await self._request(INVOKE_METHOD, params.to_wire(), params)
        except TimeoutError:
            raise timed_out(params.name, limit, params.phase) from None
        # The SEP's own invoke examples leave out the shared result fields; fill
        # them from the request rather than reject a peer that follows the text.
        raw.setdefault("interceptor", params.name)
        raw.setdefault("phase", params.phase)
        kind = self._types.get(params.name) or ("validation" if "valid" in raw else "mutation")
        raw.setdefault("type", kind)
        return self._strict_result(params.name, raw)

    def _strict_result(self, name: str, raw: dict[str, Any]) -> ValidationResult | MutationResult:
        """The result, parsed strictly: a wrong type or an unknown field fails closed.

        Lax parsing would read `"valid": "yes"` as true, so a peer's typo
        could pass traffic; the error names the server and the field instead.
        """
        try:
            result = _INVOKE_RESULT.validate_python(raw, strict=True)
        except ValidationError as err:
            first = err.errors()[0]
            # The first location part is the union's tag (`validation`/`mutation`).
            field_path = ".".join(str(part) for part in first["loc"][1:]) or "type"
            raise self._invalid_result(name, field_path, str(first["msg"])) from None
        unknown = _unknown_field(result)
        if unknown is not None:
            raise self._invalid_result(name, unknown, "not a field of an invoke result")
        return result

    def _invalid_result(self, name: str, field_path: str, reason: str) -> InterceptorError:
        return InterceptorError(
            INTERNAL_ERROR,
            "Interceptor returned an invalid result",
            {
                "server": self.id,
                "interceptor": name,
                "field": field_path,
                "reason": f"`{field_path}`: {reason}",
            },
        )

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Any request, answered with the server's raw result (without the MCP envelope keys).

        For callers that must see exactly what the server put on the wire, such
        as the conformance runner; an error reply raises ``InterceptorError``
        with the server's code and data.
        """
        return await self._request(method, params)

    async def _request(
        self, method: str, params: dict[str, Any], invoke: InvokeParams | None = None
    ) -> dict[str, Any]:
        """Send one request, reconnecting once if the session turns out to be dead.

        An invoke first makes sure the session's server still serves what the
        chain was built from (:meth:`_rediscover`).
        """
        for attempt in (1, 2):
            conn = await self._connection()
            try:
                if invoke is not None:
                    await self._rediscover(conn, invoke)
                body = await conn.request(method, params)
                if method == LIST_METHOD and conn.drift is None:
                    conn.drift = Drift()
                return body
            except _ConnectionLost as lost:
                self._drop(conn)
                if attempt == 2:
                    raise self._failure(CONNECTION_LOST, str(lost)) from None
            except MCPError as err:
                raise _as_interceptor_error(err) from None
        raise AssertionError("unreachable")

    async def _connection(self) -> _Connection:
        async with self._lock:
            conn = self._conn
            if conn is None or not conn.alive:
                if self._tg is None:
                    raise RuntimeError("RemoteProvider must be used as an async context manager")
                try:
                    conn = await self._tg.start(self._own_connection)
                except Exception as err:
                    raise self._failure(UNREACHABLE, _describe(err)) from None
                self._conn = conn
            return conn

    def _drop(self, conn: _Connection) -> None:
        conn.alive = False
        conn.stop.set()
        if self._conn is conn:
            self._conn = None

    async def _own_connection(self, *, task_status: TaskStatus[_Connection]) -> None:
        """Hold one session open until asked to stop or until its transport dies."""
        conn: _Connection | None = None
        try:
            async with AsyncExitStack() as stack:
                client = await stack.enter_async_context(Client(self._transport(stack), cache=None))
                conn = _Connection(client)
                self._live.add(conn)
                task_status.started(conn)
                await conn.stop.wait()
        except Exception as err:
            if conn is None:
                raise
            # Callers waiting on this session get CONNECTION_CLOSED from the SDK.
            logger.info("connection to interceptor server %s ended: %s", self.id, _describe(err))
        finally:
            if conn is not None:
                conn.alive = False
                self._live.discard(conn)
                conn.done.set()

    def _transport(self, stack: AsyncExitStack) -> Any:
        return client_transport(stack, self.spec, self._errlog or sys.stderr)

    def _failure(self, message: str, reason: str) -> InterceptorError:
        return InterceptorError(INTERNAL_ERROR, message, {"server": self.id, "reason": reason})


def _as_interceptor_error(err: MCPError) -> InterceptorError:
    """Same code and data as the server sent; non-object data is wrapped as ``detail``."""
    data = err.data
    if data is not None and not isinstance(data, dict):
        data = {"detail": data}
    return InterceptorError(err.code, err.message, data)


def _describe(err: BaseException) -> str:
    """One line for an error that may be a (nested) exception group."""
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    text = str(err)
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def _unknown_field(result: ValidationResult | MutationResult) -> str | None:
    """The first key the SEP does not define, anywhere in the result (``info`` is free-form)."""
    for key in result.model_extra or {}:
        return key
    if isinstance(result, ValidationResult):
        for label, items in (("messages", result.messages), ("suggestions", result.suggestions)):
            for index, item in enumerate(items or ()):
                for key in item.model_extra or {}:
                    return f"{label}.{index}.{key}"
    return None


def _first_error(err: ValidationError) -> str:
    first = err.errors()[0]
    location = ".".join(str(part) for part in first["loc"])
    return f"{location}: {first['msg']}" if location else str(first["msg"])

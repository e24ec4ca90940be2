"""A remote interceptor server seen as an ``InterceptorProvider``.

One MCP client session per server, opened lazily and reused by every
execution. The session lives in a task of its own (owned by this provider's
async context), never in the caller's task: the SDK's transports run task
groups, and a transport failure (a killed process, a refused HTTP connection)
would otherwise cancel whichever chain happened to be calling.

When the connection breaks, the session is dropped and the call is sent once
more on a fresh session, so a server that crashed or was restarted is picked
up by the very next invocation; a second failure is reported, not retried.
"""

from __future__ import annotations

import logging
import sys
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self, TextIO

import anyio
import httpx2
import mcp_types as types
from anyio.abc import TaskGroup, TaskStatus
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
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
from policy_engine.wire.errors import INTERNAL_ERROR

from .servers import ServerSpec

logger = logging.getLogger(__name__)

LIST_METHOD = "interceptors/list"
INVOKE_METHOD = "interceptor/invoke"

# The SDK reports a dropped transport as -32000 with no data. The SEP's timeout
# error shares that code but always carries data, so data tells them apart.
_CONNECTION_CLOSED = types.CONNECTION_CLOSED
# Envelope keys the 2026 protocol adds to every result; they are not SEP fields.
_ENVELOPE_KEYS = ("resultType", "_meta")
_INVOKE_RESULT: TypeAdapter[ValidationResult | MutationResult] = TypeAdapter(InvokeResult)
# connect/write limits for HTTP; the read side is bounded by the chain's timeouts.
_HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)
# How long closing may take (a stdio server exiting, an HTTP session DELETE).
_CLOSE_GRACE_S = 5.0
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
    never_modifies_payload = True

    def __init__(self, spec: ServerSpec, *, errlog: TextIO | None = None) -> None:
        self.spec = spec
        self._errlog = errlog
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
        raw = await self._request(LIST_METHOD, {})
        try:
            listed = ListInterceptorsResult.model_validate(raw)
        except ValidationError as err:
            raise InterceptorError(
                INTERNAL_ERROR,
                "Invalid interceptors/list result",
                {"server": self.id, "reason": _first_error(err)},
            ) from None
        self._descriptors = list(listed.interceptors)
        self._types = {d.name: d.type for d in listed.interceptors}
        return list(self._descriptors)

    def descriptors(self) -> list[InterceptorDescriptor]:
        if self._descriptors is None:
            raise RuntimeError(f"interceptor server `{self.id}` has not been discovered yet")
        return list(self._descriptors)

    async def invoke(self, params: InvokeParams) -> ValidationResult | MutationResult:
        raw = await self._request(INVOKE_METHOD, params.to_wire())
        # The SEP's own invoke examples leave out the shared result fields; fill
        # them from the request rather than reject a peer that follows the text.
        raw.setdefault("interceptor", params.name)
        raw.setdefault("phase", params.phase)
        kind = self._types.get(params.name) or ("validation" if "valid" in raw else "mutation")
        raw.setdefault("type", kind)
        try:
            return _INVOKE_RESULT.validate_python(raw)
        except ValidationError as err:
            raise InterceptorError(
                INTERNAL_ERROR,
                "Interceptor returned an invalid result",
                {"interceptor": params.name, "reason": _first_error(err)},
            ) from None

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Any request, answered with the server's raw result (without the MCP envelope keys).

        For callers that must see exactly what the server put on the wire, such
        as the conformance runner; an error reply raises ``InterceptorError``
        with the server's code and data.
        """
        return await self._request(method, params)

    async def _request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send one request, reconnecting once if the session turns out to be dead."""
        for attempt in (1, 2):
            conn = await self._connection()
            try:
                return await conn.request(method, params)
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
        spec = self.spec
        if spec.url is not None:
            headers = {"Authorization": f"Bearer {spec.bearer_token}"} if spec.bearer_token else {}
            http = httpx2.AsyncClient(headers=headers, timeout=_HTTP_TIMEOUT)
            stack.push_async_callback(http.aclose)
            return streamable_http_client(spec.url, http_client=http)
        assert spec.command
        params = StdioServerParameters(
            command=spec.command[0],
            args=list(spec.command[1:]),
            env=dict(spec.env) if spec.env is not None else None,
            cwd=spec.cwd,
        )
        return stdio_client(params, errlog=self._errlog or sys.stderr)

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


def _first_error(err: ValidationError) -> str:
    first = err.errors()[0]
    location = ".".join(str(part) for part in first["loc"])
    return f"{location}: {first['msg']}" if location else str(first["msg"])

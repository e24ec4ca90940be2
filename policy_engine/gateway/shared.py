"""One gateway session shared by many callers, each request one HTTP exchange.

A front without sessions (``--stateless``, and every 2026-07-28 request: that
protocol has none) cannot give each client backend connections of its own.
It keeps one :class:`GatewaySession` per protocol era per replica and
multiplexes requests into it: each request gets a gateway-unique id (callers'
ids collide), its progress token is renamed the same way, and what the
session writes back is routed to the exchange waiting on that id. What
policies need per caller (the memory of filtered lists, the session id that
flow rules key their state by) is a view per caller key, bounded, the least
recently used dropped first; the flow state itself is in the flow store,
which replicas share.
"""

from __future__ import annotations

import itertools
import json
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
from anyio.abc import TaskStatus
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from mcp_types import (
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
)
from starlette.types import Receive, Send

from policy_engine.interception import (
    LIST_CHANGED,
    InputKeys,
    Interception,
    InterceptionSession,
)
from policy_engine.server.resource_server import current_principal
from policy_engine.wire import Principal
from policy_engine.wire.errors import INTERNAL_ERROR

from .backend import describe
from .session import GatewaySession, SessionOptions

logger = logging.getLogger("policyc.gateway")

MAX_VIEWS = 1024
"""Callers whose list memory a replica keeps; one that was dropped lists again."""
_BUFFERED = 64
_PING_S = 15.0
_SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]


@dataclass
class _Exchange:
    internal: str
    caller: str
    original_id: RequestId
    token: Any
    messages: MemoryObjectReceiveStream[JSONRPCMessage]

    def restore(self, message: JSONRPCMessage) -> dict[str, Any]:
        """The message as this caller must see it: its own request id and progress token."""
        if isinstance(message, JSONRPCResponse):
            return {"jsonrpc": "2.0", "id": self.original_id, "result": message.result}
        if isinstance(message, JSONRPCError):
            error = message.error.model_dump(by_alias=True, mode="json", exclude_none=True)
            return {"jsonrpc": "2.0", "id": self.original_id, "error": error}
        assert isinstance(message, JSONRPCNotification)
        body: dict[str, Any] = {"jsonrpc": "2.0", "method": message.method}
        if message.params is not None:
            params = dict(message.params)
            if "progressToken" in params:
                params["progressToken"] = self.token
            body["params"] = params
        return body


class SharedSession:
    """A gateway session with its own backend connections, serving any caller."""

    def __init__(
        self, interception: Interception, options: SessionOptions, input_keys: InputKeys
    ) -> None:
        self.interception = interception
        self.input_keys = input_keys
        self.session = GatewaySession(interception, options, self)
        self.ended = anyio.Event()
        self._ids = itertools.count(1)
        self._open: dict[RequestId, MemoryObjectSendStream[JSONRPCMessage]] = {}
        self._by_caller: dict[tuple[str, RequestId], RequestId] = {}
        self._cancelled: set[RequestId] = set()
        self._views: OrderedDict[str, InterceptionSession] = OrderedDict()

    async def run(self, on_end: Callable[[str], None], *, task_status: TaskStatus[None]) -> None:
        """Connect the backends; then serve until the session ends (a backend's fatal exit)."""
        feed, front_read = anyio.create_memory_object_stream[SessionMessage](0)
        failure: list[Exception] = []
        started = False

        async def serve() -> None:
            try:
                await self.session.run(front_read)
            except Exception as err:
                failure.append(err)
            finally:
                self.ended.set()
                self.session.ready.set()  # wakes `run` if the backends never connected
                for stream in list(self._open.values()):
                    stream.close()  # every waiting exchange answers now
                reason = self.session.fatal or (describe(failure[0]) if failure else None)
                if started and reason is not None:
                    on_end(reason)

        async with feed, front_read, anyio.create_task_group() as tg:
            tg.start_soon(serve)
            await self.session.ready.wait()
            if failure:
                raise failure[0]
            started = True
            task_status.started()
            await self.ended.wait()

    def view(self, caller: str, principal: Principal | None = None) -> InterceptionSession:
        """This caller's view of the chain: its lists' memory, its session id; with a
        verified ``principal``, a view of that principal's own (what a list hid from one
        user must not decide another's call), carrying this request's claims."""
        key = caller if principal is None else f"{caller} {principal.id}"
        view = self._views.get(key)
        if view is None:
            view = InterceptionSession(
                self.interception, session_id=caller, input_keys=self.input_keys
            )
            self._views[key] = view
            while len(self._views) > MAX_VIEWS:
                self._views.popitem(last=False)
        else:
            self._views.move_to_end(key)
        return view if principal is None else view.bound(principal=principal)

    def cancel(self, caller: str, request_id: RequestId) -> None:
        """A caller's ``notifications/cancelled``: effective where its request is served."""
        internal = self._by_caller.get((caller, request_id))
        if internal is not None:
            self.session.cancel(internal)
            self._cancelled.add(internal)
            stream = self._open.get(internal)
            if stream is not None:
                stream.close()  # its POST ends now: a cancelled request has no answer

    # the front the session writes to

    async def send(self, item: SessionMessage) -> None:
        message = item.message
        key: RequestId | None
        if isinstance(message, JSONRPCResponse | JSONRPCError):
            key = message.id
        else:
            metadata = item.metadata
            key = (
                metadata.related_request_id if isinstance(metadata, ServerMessageMetadata) else None
            )
        stream = self._open.get(key) if key is not None else None
        if stream is None:
            self._unrelated(message)
            return
        try:
            if isinstance(message, JSONRPCNotification):
                stream.send_nowait(message)  # a caller that does not read loses progress only
            else:
                await stream.send(message)
        except (anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
            logger.debug("dropped a message for a finished exchange")

    def _unrelated(self, message: JSONRPCMessage) -> None:
        """No stream reaches a caller outside its request: what a list change hid is
        learned again; everything else is dropped (docs/gateway.md says which)."""
        method = getattr(message, "method", None)
        listing = LIST_CHANGED.get(method) if isinstance(method, str) else None
        if listing is not None:
            for view in self._views.values():
                view.forget(listing)
        logger.debug("no session stream: dropped %s", method or "a message")

    # one request

    @asynccontextmanager
    async def exchange(self, request: JSONRPCRequest, caller: str) -> AsyncIterator[_Exchange]:
        """Submit ``request`` under a unique id; yields what comes back for it."""
        internal = f"x{next(self._ids)}"
        params = request.params
        meta = (params or {}).get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if params is not None and token is not None and isinstance(meta, dict):
            params = {**params, "_meta": {**meta, "progressToken": internal}}
        send, receive = anyio.create_memory_object_stream[JSONRPCMessage](_BUFFERED)
        self._open[internal] = send
        self._by_caller[(caller, request.id)] = internal
        try:
            if self.ended.is_set():
                send.close()
            else:
                forwarded = JSONRPCRequest.model_construct(
                    jsonrpc="2.0", id=internal, method=request.method, params=params
                )
                # Each request as its own verified caller, whom the auth layer set.
                self.session.submit(forwarded, self.view(caller, current_principal()))
            yield _Exchange(internal, caller, request.id, token, receive)
        finally:
            self._open.pop(internal, None)
            self._cancelled.discard(internal)
            if self._by_caller.get((caller, request.id)) == internal:
                del self._by_caller[(caller, request.id)]
            self.session.cancel(internal)  # nothing once it was answered
            send.close()
            receive.close()

    async def answer(
        self,
        request: JSONRPCRequest,
        caller: str,
        receive: Receive,
        send: Send,
        *,
        sse: bool,
        statuses: Mapping[int, int] | None = None,
    ) -> None:
        """Serve one request on its own HTTP response: JSON, or an SSE stream once a
        notification (progress) comes first or the answer takes long (pings keep it open).
        The client going away cancels the request on the backend."""
        async with self.exchange(request, caller) as exchange, anyio.create_task_group() as tg:
            tg.start_soon(_cancel_on_disconnect, receive, tg.cancel_scope)
            streaming = False
            while True:
                message: JSONRPCMessage | None = None
                with anyio.move_on_after(_PING_S):
                    try:
                        message = await exchange.messages.receive()
                    except anyio.EndOfStream:
                        if exchange.internal in self._cancelled:
                            await _end(send, streaming)
                            break
                        message = _stopping(request.id)
                if message is None or isinstance(message, JSONRPCNotification):
                    if not sse:
                        continue
                    if not streaming:
                        await send(
                            {"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS}
                        )
                        streaming = True
                    chunk = _event(exchange.restore(message)) if message else b": ping\r\n\r\n"
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                    continue
                body = exchange.restore(message)
                if streaming:
                    await send({"type": "http.response.body", "body": _event(body)})
                else:
                    code = body["error"]["code"] if "error" in body else None
                    status = (statuses or {}).get(code, 200) if code is not None else 200
                    await write_json(send, body, status)
                break
            tg.cancel_scope.cancel()


async def _cancel_on_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    while (await receive()).get("type") != "http.disconnect":
        pass
    scope.cancel()


async def _end(send: Send, streaming: bool) -> None:
    """End the response of a request the client cancelled: it is owed no answer."""
    if streaming:
        await send({"type": "http.response.body", "body": b""})
    else:
        await send({"type": "http.response.start", "status": 202, "headers": []})
        await send({"type": "http.response.body", "body": b""})


def _stopping(request_id: RequestId) -> JSONRPCError:
    error = ErrorData(
        code=INTERNAL_ERROR, message="Gateway stopping", data={"reason": "the backends are gone"}
    )
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=error)


def _event(body: dict[str, Any]) -> bytes:
    return f"event: message\r\ndata: {json.dumps(body, separators=(',', ':'))}\r\n\r\n".encode()


async def write_json(
    send: Send,
    body: dict[str, Any],
    status: int = 200,
    headers: list[tuple[bytes, bytes]] | None = None,
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), *(headers or [])],
        }
    )
    await send({"type": "http.response.body", "body": json.dumps(body).encode()})

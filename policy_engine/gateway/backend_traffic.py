"""Backend -> client traffic of one gateway session: a backend's requests (sampling,
elicitation, roots) forwarded to the client and its answer back, a backend's
notifications, each through the chain.

A backend's request gets a gateway id of its own towards the client and rides
on the newest open client request (HTTP needs a stream to put it on), or on the
stream for messages of no request, held until the client has opened it
(:mod:`.held`); a front without a session stream (``--stateless``) refuses it, and the backend
is told why. A progress or log notification goes with the client request it
belongs to, when that is certain.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from mcp.server.connection import allowed_log_levels
from mcp.shared.subscriptions import SUBSCRIPTION_ID_META_KEY
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

from policy_engine.interception import LIST_CHANGED, InterceptionSession, Refuse
from policy_engine.wire import InterceptorError
from policy_engine.wire.constants import CANCELLED
from policy_engine.wire.errors import INTERNAL_ERROR, INVALID_REQUEST, REQUEST_TIMEOUT

from .backend import Backend
from .held import ClientStream, Delivery
from .reply import cancelled, error_reply, refusal_error, request_message
from .scope import OpenRequests

logger = logging.getLogger("policyc.gateway")

SendFront = Callable[[JSONRPCMessage, RequestId | None], Awaitable[None]]
"""Writes to the client, with the client request the message belongs to (if known)."""


class BackendTraffic:
    """What the session's backends send towards the client, through the chain."""

    def __init__(
        self,
        chain: InterceptionSession,
        open_requests: OpenRequests,
        send_front: SendFront,
        *,
        back_channel: bool,
        rootless: set[str],
        client_stream: ClientStream | None = None,
    ):
        self._chain = chain
        self._open = open_requests
        self._send_front = send_front
        self._back_channel = back_channel
        self._rootless = rootless
        self._client_stream = client_stream or ClientStream(None)
        self._front_ids = itertools.count(1)
        self._awaiting: dict[RequestId, tuple[anyio.Event, list[JSONRPCMessage]]] = {}
        self._s2c: dict[tuple[str, RequestId], tuple[RequestId, anyio.CancelScope]] = {}

    def client_answered(self, message: JSONRPCResponse | JSONRPCError) -> None:
        """The client's answer to a request a backend sent it (others are ignored)."""
        waiting = self._awaiting.get(message.id) if message.id is not None else None
        if waiting is not None:
            waiting[1].append(message)
            waiting[0].set()

    async def request(self, backend: Backend, request: JSONRPCRequest) -> None:
        """A backend's request: through the chain to the client, its answer back through
        the chain to the backend; the backend always gets one answer."""
        logger.debug("%s -> %s (id %s)", backend.name, request.method, request.id)
        method = request.method
        if not self._back_channel:
            if method == "roots/list":
                # It would go on with the directories it was started with, not the client's.
                logger.error("backend %s asks for roots; no client can give them", backend.name)
                self._rootless.add(backend.name)
            reason = f"the gateway has no session stream to the client (--stateless): {method}"
            refusal = ErrorData(
                code=INVALID_REQUEST, message="No back channel", data={"reason": reason}
            )
            await backend.answer(request.id, None, refusal)
            return
        outcome = await self._chain.server_request(method, request.params, server=backend.name)
        if isinstance(outcome, Refuse):
            await backend.answer(request.id, None, refusal_error(outcome.refusal))
            return
        front_id = f"gw-{next(self._front_ids)}"
        event = anyio.Event()
        box: list[JSONRPCMessage] = []
        self._awaiting[front_id] = (event, box)
        scope = anyio.CancelScope()
        # Registered before any wait: the backend may cancel while the request is held.
        self._s2c[(backend.name, request.id)] = (front_id, scope)
        try:
            with scope:
                delivery = await self._client_stream.wait(self._open.latest, backend.spec.timeout_s)
                if not delivery.deliverable:
                    await self._undelivered(backend, request, delivery)
                    return
                forwarded = request_message(front_id, method, outcome.payload)
                await self._send_front(forwarded, delivery.related)
                with anyio.move_on_after(backend.spec.timeout_s) as wait:
                    await event.wait()
                if wait.cancelled_caught:
                    await self._send_front(cancelled(front_id, "timed out in the gateway"), None)
                    error = InterceptorError(
                        REQUEST_TIMEOUT, "Client did not answer in time", {"server": backend.name}
                    )
                    await backend.answer(request.id, None, error_reply(error).error)
                    return
        finally:
            self._awaiting.pop(front_id, None)
            self._s2c.pop((backend.name, request.id), None)
        if scope.cancelled_caught or not box:
            return
        answer = box[0]
        if isinstance(answer, JSONRPCError):
            await backend.answer(request.id, None, answer.error)
            return
        assert isinstance(answer, JSONRPCResponse)
        checked = await self._chain.server_response(method, answer.result, server=backend.name)
        if isinstance(checked, Refuse):
            await backend.answer(request.id, None, refusal_error(checked.refusal))
        else:
            await backend.answer(request.id, checked.payload, None)

    async def _undelivered(
        self, backend: Backend, request: JSONRPCRequest, delivery: Delivery
    ) -> None:
        """The backend's answer for a request no client stream could take: a timeout, or
        at once when the session already holds its limit of them."""
        logger.warning(
            "backend %s: %s not delivered: %s", backend.name, request.method, delivery.reason
        )
        data = {"server": backend.name, "reason": delivery.reason}
        if delivery.busy:
            error = InterceptorError(INTERNAL_ERROR, "Too many requests held for the client", data)
        else:
            error = InterceptorError(REQUEST_TIMEOUT, "Client did not answer in time", data)
        await backend.answer(request.id, None, error_reply(error).error)

    async def notification(self, backend: Backend, message: JSONRPCNotification) -> None:
        """A backend's notification through the chain to the client (a cancellation
        cancels the backend's request the client is answering)."""
        logger.debug("%s -> notification %s", backend.name, message.method)
        params = message.params
        if message.method == CANCELLED:
            found = self._s2c.get((backend.name, (params or {}).get("requestId")))  # type: ignore[arg-type]
            if found is not None:
                front_id, scope = found
                scope.cancel()
                await self._send_front(cancelled(front_id, (params or {}).get("reason")), None)
            return
        changed = LIST_CHANGED.get(message.method)
        if changed is not None:
            self._chain.forget(changed)  # what the list hides and shows is learned anew
        outcome = await self._chain.notification(
            message.method, params, origin="server", server=backend.name
        )
        if isinstance(outcome, Refuse):
            logger.info("dropped %s from %s: blocked by policy", message.method, backend.name)
            return
        payload = outcome.payload
        if isinstance(payload, dict):
            payload = _restore_subscription(backend, payload)
        related = None
        if message.method == "notifications/progress" and isinstance(payload, dict):
            related = self._open.progress.get(payload.get("progressToken"))
        elif message.method == "notifications/message" and isinstance(payload, dict):
            related = self._log_request(backend, payload)
        if payload is None:
            forwarded = JSONRPCNotification.model_construct(jsonrpc="2.0", method=message.method)
        else:
            forwarded = JSONRPCNotification.model_construct(
                jsonrpc="2.0", method=message.method, params=payload
            )
        await self._send_front(forwarded, related)

    def _log_request(self, backend: Backend, payload: dict[str, Any]) -> RequestId | None:
        """The client request a backend's log message belongs to, when that is certain:
        the backend has one request open, its client opted in (2026-07-28's
        ``io.modelcontextprotocol/logLevel``) at or below the message's level. A
        sessionless front delivers it on that request's response (and drops the rest:
        a guess could hand one caller another's log); a session stream carries all."""
        origin = backend.sole_origin()
        envelope = self._open.logging.get(origin) if origin is not None else None
        if envelope is None:
            return None
        version = str(envelope.get(PROTOCOL_VERSION_META_KEY))
        return origin if payload.get("level") in allowed_log_levels(version, envelope) else None


def _restore_subscription(backend: Backend, params: dict[str, Any]) -> dict[str, Any]:
    """A notification on a ``subscriptions/listen`` stream names the stream by its
    request's id; the backend knows the gateway's id for it, the client its own."""
    meta = params.get("_meta")
    if not isinstance(meta, dict) or SUBSCRIPTION_ID_META_KEY not in meta:
        return params
    client_id = backend.origin_of(meta[SUBSCRIPTION_ID_META_KEY])
    if client_id is None:
        return params
    return {**params, "_meta": {**meta, SUBSCRIPTION_ID_META_KEY: client_id}}

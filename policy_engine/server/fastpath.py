"""The stdio fast lane: interceptor calls answered without the SDK's dispatch stack.

Most of an invoke's cost over the SDK's stdio stack is the generic machinery
around the handler (a dispatch context, a session object, a middleware chain
with a tracing span, result sieving), not the interceptor. Once the SDK has
completed the handshake, this lane answers ``interceptor/invoke`` and
``interceptors/list`` directly from the transport. Everything else (the
handshake itself, ping, notifications, unknown methods, and any interceptor
call that is not plainly well formed for the connection's era) still goes to
the SDK, which stays the authority on protocol behaviour. What the lane gives
up is the SDK middleware on those two methods (its OpenTelemetry span).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Literal

import orjson
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.inbound import InboundModernRoute, classify_inbound_request
from mcp_types import (
    PROTOCOL_VERSION_META_KEY,
    SERVER_INFO_META_KEY,
    JSONRPCMessage,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
)

from policy_engine.wire import InterceptorError
from policy_engine.wire.errors import INTERNAL_ERROR
from policy_engine.wire.finite import find_non_finite

from ..wire.constants import INITIALIZE, INVOKE_METHODS, LIST_METHOD
from .service import InterceptorService

Era = Literal["legacy", "modern"]
_LANE_METHODS = INVOKE_METHODS | {LIST_METHOD}


def _has_envelope(params: Mapping[str, Any] | None) -> bool:
    meta = (params or {}).get("_meta")
    return isinstance(meta, Mapping) and PROTOCOL_VERSION_META_KEY in meta


_ORJSON = (
    orjson.OPT_APPEND_NEWLINE | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
)


def encode_line(message: dict[str, Any]) -> bytes:
    """One line, written by orjson: the bytes pydantic writes on the SDK's path (floats
    in the same shortest form), at a fraction of ``json``'s cost on a 10 KB result.

    orjson writes NaN and the infinities as ``null`` where JSON has no such numbers:
    a line holding ``null`` is checked for them, and one is refused (``ValueError``)
    as ``json`` refused it. What orjson cannot write (an integer past 64 bits) is
    written by ``json``.
    """
    try:
        line = orjson.dumps(message, option=_ORJSON)
    except TypeError:
        return (
            json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n"
        ).encode()
    if b"null" in line and find_non_finite(message) is not None:
        raise ValueError("Out of range float values are not JSON compliant")
    return line


def _error_line(request_id: RequestId, error: dict[str, Any]) -> bytes:
    return encode_line({"jsonrpc": "2.0", "id": request_id, "error": error})


class FastLane:
    """Follows the connection's era and handshake, and answers the calls it may take.

    The era is decided the way the SDK decides it (the first request: an
    enveloped non-``initialize`` request opens a 2026 connection), and a
    handshake connection is only served here after the SDK's ``initialize``
    response has gone out, so the SDK's pre-initialization gate still holds.
    """

    def __init__(
        self, service: InterceptorService, server_info: Callable[[], dict[str, Any]]
    ) -> None:
        self._service = service
        self._server_info = server_info
        self._era: Era | None = None
        self._initialize_id: RequestId | None = None
        self._handshake_done = False

    def observe_inbound(self, message: JSONRPCMessage) -> None:
        if not isinstance(message, JSONRPCRequest):
            return
        if self._era is None:
            opens_modern = message.method != INITIALIZE and _has_envelope(message.params)
            self._era = "modern" if opens_modern else "legacy"
        if message.method == INITIALIZE and self._initialize_id is None:
            self._initialize_id = coerce_request_id(message.id)

    def observe_outbound(self, message: JSONRPCMessage) -> None:
        if (
            not self._handshake_done
            and isinstance(message, JSONRPCResponse)
            and self._initialize_id is not None
            and coerce_request_id(message.id) == self._initialize_id
        ):
            self._handshake_done = True

    def claims(self, request: JSONRPCRequest) -> bool:
        if request.method not in _LANE_METHODS:
            return False
        enveloped = _has_envelope(request.params)
        if self._era == "legacy":
            return self._handshake_done and not enveloped
        if self._era == "modern" and enveloped:
            body = {"method": request.method, "params": request.params}
            return isinstance(classify_inbound_request(body), InboundModernRoute)
        return False

    async def answer(self, request: JSONRPCRequest) -> bytes:
        """The encoded response line; never raises for a bad call or a bad result."""
        try:
            if request.method in INVOKE_METHODS:
                result = await self._service.invoke(request.params)
            else:
                result = self._service.list(request.params)
        except InterceptorError as error:
            return _error_line(request.id, error.to_wire())
        except Exception as exc:
            return _error_line(
                request.id,
                {
                    "code": INTERNAL_ERROR,
                    "message": "Internal error",
                    "data": {"reason": type(exc).__name__},
                },
            )
        if self._era == "modern":
            result = {
                **result,
                "resultType": "complete",
                "_meta": {SERVER_INFO_META_KEY: self._server_info()},
            }
        try:
            return encode_line({"jsonrpc": "2.0", "id": request.id, "result": result})
        except (ValueError, TypeError, RecursionError) as exc:
            reason = f"result could not be serialized ({type(exc).__name__})"
            failure = {
                "code": INTERNAL_ERROR,
                "message": "Internal error",
                "data": {"reason": reason},
            }
            return _error_line(request.id, failure)

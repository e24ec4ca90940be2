"""What a gateway session answers and sends: a reply, a refusal as an error, the
JSON-RPC messages it writes itself (a forwarded request, a cancellation)."""

from __future__ import annotations

from typing import Any

from mcp_types import ErrorData, JSONRPCNotification, JSONRPCRequest, RequestId

from policy_engine.interception import Refuse
from policy_engine.wire import InterceptorError
from policy_engine.wire.constants import CANCELLED
from policy_engine.wire.errors import INVALID_PARAMS

BLOCKED = "Interceptor validation failed"
"""The message of the error a refusal without words of its own becomes."""


class Reply:
    """One request's answer: a result or an error."""

    __slots__ = ("error", "result")

    def __init__(self, result: dict[str, Any] | None = None, error: ErrorData | None = None):
        self.result = result
        self.error = error


def error_reply(err: InterceptorError) -> Reply:
    return Reply(error=ErrorData(code=err.code, message=err.message, data=err.data))


def refused_reply(refuse: Refuse) -> Reply:
    if refuse.result is not None:
        return Reply(result=refuse.result)
    assert refuse.error is not None
    return error_reply(refuse.error)


def refusal_error(refuse: Refuse) -> ErrorData:
    err = refuse.error or InterceptorError(INVALID_PARAMS, BLOCKED)
    reply = error_reply(err)
    assert reply.error is not None
    return reply.error


def request_message(
    request_id: RequestId, method: str, params: dict[str, Any] | None
) -> JSONRPCRequest:
    """A request as sent: without params when it had none (a ``"params": null`` is not
    a request the TypeScript SDK accepts, so it would drop it)."""
    if params is None:
        return JSONRPCRequest.model_construct(jsonrpc="2.0", id=request_id, method=method)
    return JSONRPCRequest.model_construct(
        jsonrpc="2.0", id=request_id, method=method, params=params
    )


def cancelled(request_id: RequestId, reason: Any) -> JSONRPCNotification:
    params: dict[str, Any] = {"requestId": request_id}
    if isinstance(reason, str):
        params["reason"] = reason
    return JSONRPCNotification.model_construct(jsonrpc="2.0", method=CANCELLED, params=params)

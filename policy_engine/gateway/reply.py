"""What a gateway session answers and sends: a reply, a refusal as an error, the
JSON-RPC messages it writes itself (a forwarded request, a cancellation)."""

from __future__ import annotations

from typing import Any

from mcp_types import ErrorData, JSONRPCNotification, JSONRPCRequest, RequestId

from policy_engine.interception import Refuse
from policy_engine.wire import InterceptorError, Refusal
from policy_engine.wire.constants import CANCELLED


class Reply:
    """One request's answer: a result or an error, and the refusal it stands for when
    the gateway refused (what a list merge asks: did a policy refuse, or did it fail?)."""

    __slots__ = ("error", "refusal", "result")

    def __init__(
        self,
        result: dict[str, Any] | None = None,
        error: ErrorData | None = None,
        refusal: Refusal | None = None,
    ):
        self.result = result
        self.error = error
        self.refusal = refusal

    @property
    def blocked_by_policy(self) -> bool:
        """A policy refused this request here (a backend's own error never counts)."""
        return self.refusal is not None and self.refusal.blocked_by_policy


def error_reply(err: InterceptorError) -> Reply:
    return Reply(error=ErrorData(code=err.code, message=err.message, data=err.data))


def refused_reply(refuse: Refuse) -> Reply:
    """The gateway's answer for a refusal: its tool result, or its error."""
    if refuse.as_result:
        return Reply(result=refuse.refusal.to_result(), refusal=refuse.refusal)
    return Reply(error=refusal_error(refuse.refusal), refusal=refuse.refusal)


def refusal_error(refusal: Refusal) -> ErrorData:
    """A refusal as the JSON-RPC error the gateway writes (a backend's request refused)."""
    return ErrorData(code=refusal.code, message=refusal.message, data=refusal.to_error_data())


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

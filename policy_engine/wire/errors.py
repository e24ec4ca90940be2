"""JSON-RPC error codes and structured error data shared by every layer.

Error data names what went wrong but never echoes payload content: the SEP's
security section warns that error text can leak what a mutator redacted.
"""

from __future__ import annotations

from typing import Any

from ._base import Phase, Severity

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
TIMEOUT = -32000
REQUEST_TIMEOUT = -32001
"""The SDK's REQUEST_TIMEOUT: a request the other side did not answer in time."""
UNAUTHORIZED = -32001
"""An HTTP request refused for its bearer token (401/403); MCP servers answer it this way."""

VALIDATION_FAILED = "Interceptor validation failed"
"""The SEP's message for a policy's block. Hosts never compare a message with it: a
:class:`~policy_engine.wire.refusal.Refusal` says whether a policy refused."""


class PolicycError(Exception):
    """Base of every error policyc raises on purpose: catch this to catch them all.

    It lives in the lowest layer so that every layer's errors (a policy that
    does not compile, an interceptor failure, a chain that cannot be built, a
    call an integration refused) derive from it without importing upward.
    """


class InterceptorError(PolicycError):
    """A failure that maps to one JSON-RPC error object."""

    def __init__(self, code: int, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_wire(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    def __repr__(self) -> str:
        return f"InterceptorError({self.code}, {self.message!r}, {self.data!r})"


def invalid_params(reason: str, **fields: Any) -> InterceptorError:
    return InterceptorError(INVALID_PARAMS, "Invalid params", {"reason": reason, **fields})


def unknown_interceptor(name: str, known: list[str] | None = None) -> InterceptorError:
    data: dict[str, Any] = {"reason": "unknown interceptor", "interceptor": name}
    if known:
        data["known"] = known
    return InterceptorError(INVALID_PARAMS, f"Unknown interceptor: {name}", data)


def not_hooked(name: str, event: str, phase: Phase) -> InterceptorError:
    return InterceptorError(
        INVALID_PARAMS,
        f"Interceptor {name} does not hook {event} at phase {phase}",
        {"reason": "event not hooked", "interceptor": name, "event": event, "phase": phase},
    )


def execution_failed(name: str, reason: str) -> InterceptorError:
    return InterceptorError(
        INTERNAL_ERROR, "Interceptor execution failed", {"interceptor": name, "reason": reason}
    )


def timed_out(name: str, timeout_ms: int, phase: Phase) -> InterceptorError:
    return InterceptorError(
        TIMEOUT,
        "Interceptor execution timeout",
        {"interceptor": name, "timeoutMs": timeout_ms, "phase": phase, "reason": "timeout"},
    )


def chain_validation_failed(errors: list[dict[str, Any]]) -> InterceptorError:
    """``errors`` items: {interceptor, severity, message, path?}."""
    return InterceptorError(INVALID_PARAMS, VALIDATION_FAILED, {"validationErrors": errors})


def chain_mutation_failed(name: str, reason: str | None = None) -> InterceptorError:
    data: dict[str, Any] = {"failedInterceptor": name}
    if reason is not None:
        data["reason"] = reason
    return InterceptorError(INTERNAL_ERROR, "Interceptor mutation failed", data)


def validation_error_item(
    interceptor: str, severity: Severity, message: str, path: str | None = None
) -> dict[str, Any]:
    item: dict[str, Any] = {"interceptor": interceptor, "severity": severity, "message": message}
    if path is not None:
        item["path"] = path
    return item

"""Wire vocabulary that needs no pydantic: the checker imports only this and
`events`, so `policyc check` starts without building any model class."""

from __future__ import annotations

from typing import Literal

from .events import STANDARD_EVENTS

Phase = Literal["request", "response"]
Severity = Literal["info", "warn", "error"]
InterceptorType = Literal["validation", "mutation"]
Mode = Literal["active", "audit"]
# The older spelling of `active`, still accepted from peers and in policies.
MODE_ALIASES: dict[str, Mode] = {"enforce": "active"}

# The SEP-2624 methods an interceptor server answers (one home for chain and server).
LIST_METHOD = "interceptors/list"
INVOKE_METHOD = "interceptor/invoke"
# The SEP's Backward Compatibility section spells it once as `interceptors/invoke`
# and renaming is discussed upstream: every front answers both (docs/conformance.md).
INVOKE_METHOD_ALIAS = "interceptors/invoke"
INVOKE_METHODS = frozenset({INVOKE_METHOD, INVOKE_METHOD_ALIAS})

# MCP lifecycle methods: what a host must pass through untouched.
INITIALIZE = "initialize"
DISCOVER = "server/discover"
INITIALIZED = "notifications/initialized"
CANCELLED = "notifications/cancelled"
HANDSHAKE_METHODS = frozenset({INITIALIZE, DISCOVER})
"""The two ways a session opens (2025 `initialize`, 2026 `server/discover`)."""
SKIPPED_METHODS = HANDSHAKE_METHODS | {INITIALIZED, CANCELLED, LIST_METHOD} | INVOKE_METHODS
"""Lifecycle and the interceptor methods themselves: never intercepted, so nothing recurses."""
OTHER_MCP_METHODS = frozenset(
    {
        "ping",
        "completion/complete",
        "logging/setLevel",
        "resources/templates/list",
        "resources/unsubscribe",
        "tasks/get",
        "tasks/result",
        "tasks/list",
        "tasks/cancel",
    }
)
"""MCP requests that are not SEP events: with those, the names a trace span may carry."""

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1

UNKNOWN = "(unknown)"
"""What a trace span or a metric label shows for a name a client chose and no catalog knows."""
KNOWN_METHODS = (
    frozenset(STANDARD_EVENTS) | HANDSHAKE_METHODS | INVOKE_METHODS | OTHER_MCP_METHODS
) | {LIST_METHOD}
"""Methods a span may be named after or carry as an attribute."""


def method_label(method: str) -> str:
    """``method`` when MCP or the SEP defines it, else :data:`UNKNOWN`: a client picks a
    notification's method, and a span name must never carry its free text."""
    return method if method in KNOWN_METHODS else UNKNOWN

"""W3C Trace Context (``traceparent``, ``tracestate``) as MCP carries it in ``params._meta``.

A client puts ``traceparent`` (and perhaps ``tracestate``) in a request's
``_meta``; the hosts continue its trace and hand its ids on in the SEP
invocation context (``traceId``, ``spanId``). Both values come from a client,
so they are bounded and checked here, and a malformed one is simply ignored
(the host starts a new trace): tracing never turns a request into an error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

TRACEPARENT_KEY: Final = "traceparent"
TRACESTATE_KEY: Final = "tracestate"

TRACEPARENT_MAX: Final = 256
"""Longest ``traceparent`` read: version 00 is 55 characters; a later version may
append fields, but nothing legitimate comes near this."""
TRACESTATE_MAX: Final = 512
"""Longest ``tracestate`` handed on (W3C: at least 512 characters must be propagated);
a longer one is dropped, not cut, since a cut entry would be corrupt."""

_TRACEPARENT = re.compile(
    r"(?P<version>[0-9a-f]{2})-(?P<trace>[0-9a-f]{32})-(?P<span>[0-9a-f]{16})-"
    r"(?P<flags>[0-9a-f]{2})(?P<rest>-.*)?"
)
_TRACE_ID = re.compile(r"[0-9a-f]{32}")
_SPAN_ID = re.compile(r"[0-9a-f]{16}")
_ZERO_TRACE: Final = "0" * 32
_ZERO_SPAN: Final = "0" * 16


@dataclass(frozen=True)
class TraceParent:
    """A valid remote parent: hex ``trace_id`` (32) and ``span_id`` (16), its flags."""

    trace_id: str
    span_id: str
    flags: int = 0
    tracestate: str | None = None

    @property
    def sampled(self) -> bool:
        return bool(self.flags & 1)

    def header(self) -> str:
        """The ``traceparent`` value (version 00)."""
        return f"00-{self.trace_id}-{self.span_id}-{self.flags:02x}"


def parse_traceparent(value: object, tracestate: object = None) -> TraceParent | None:
    """The parent a ``traceparent`` value names, or ``None`` for anything malformed.

    Follows the W3C rules: lower-case hex, version ``ff`` invalid, all-zero ids
    invalid, version 00 exactly 55 characters, a later version may carry more
    after a dash. ``tracestate`` is kept only when it is a string within bounds.
    """
    if not isinstance(value, str) or len(value) > TRACEPARENT_MAX:
        return None
    match = _TRACEPARENT.fullmatch(value)
    if match is None:
        return None
    version, rest = match["version"], match["rest"]
    if version == "ff" or (version == "00" and rest is not None):
        return None
    trace_id, span_id = match["trace"], match["span"]
    if trace_id == _ZERO_TRACE or span_id == _ZERO_SPAN:
        return None
    state = (
        tracestate if isinstance(tracestate, str) and len(tracestate) <= TRACESTATE_MAX else None
    )
    return TraceParent(trace_id, span_id, int(match["flags"], 16), state or None)


def from_meta(meta: object) -> TraceParent | None:
    """The parent in a request's ``_meta`` (``traceparent``, ``tracestate``), if valid."""
    if not isinstance(meta, dict) or TRACEPARENT_KEY not in meta:
        return None
    return parse_traceparent(meta.get(TRACEPARENT_KEY), meta.get(TRACESTATE_KEY))


def from_ids(trace_id: object, span_id: object) -> TraceParent | None:
    """A parent from an invocation context's ``traceId`` and ``spanId``, when both are
    W3C ids (the SEP leaves their format open: anything else is not a parent)."""
    if not (isinstance(trace_id, str) and isinstance(span_id, str)):
        return None
    if not (_TRACE_ID.fullmatch(trace_id) and _SPAN_ID.fullmatch(span_id)):
        return None
    if trace_id == _ZERO_TRACE or span_id == _ZERO_SPAN:
        return None
    return TraceParent(trace_id, span_id, 1)


def payload_meta(payload: Any) -> object:
    """A request payload's ``_meta`` (``params._meta``), or ``None``."""
    return payload.get("_meta") if isinstance(payload, dict) else None


_MAX_RULES: Final = 32
_RULE_CHARS: Final = 256


def rule_codes(info: object) -> list[str]:
    """The codes of the rules that fired (a result's ``info.rules[].rule``), for a span:
    a code or ``file:line`` the policy chose, never a message (which may quote the
    payload); bounded in count and length whoever made the result."""
    rules = info.get("rules") if isinstance(info, dict) else None
    if not isinstance(rules, list):
        return []
    return [
        rule["rule"][:_RULE_CHARS]
        for rule in rules[:_MAX_RULES]
        if isinstance(rule, dict) and isinstance(rule.get("rule"), str)
    ]


__all__ = [
    "TRACEPARENT_KEY",
    "TRACEPARENT_MAX",
    "TRACESTATE_KEY",
    "TRACESTATE_MAX",
    "TraceParent",
    "from_ids",
    "from_meta",
    "parse_traceparent",
    "payload_meta",
    "rule_codes",
]

"""What the chain needs of a tracer: a span it can open children of, and nothing else.

The chain depends on ``wire`` only, so it does not know OpenTelemetry: a host
that traces (``policy_engine.observability.tracing``) hands :func:`execute_chain`
a :class:`TraceSpan` for the run, and the chain opens one child per interceptor
invocation, whose ids go into that invocation's context (``traceId``,
``spanId``). Without one, the chain pays a single ``is None`` test per call.

Attributes never carry payload content: names, phase, event, outcome, rule codes
and durations only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

AttributeValue = str | bool | int | float | Sequence[str]
Attributes = Mapping[str, AttributeValue]


class TraceSpan(Protocol):
    """One open span: its W3C ids (lower-case hex), its children, its end."""

    @property
    def trace_id(self) -> str: ...

    @property
    def span_id(self) -> str: ...

    def child(self, name: str, attributes: Attributes) -> TraceSpan:
        """Open a span under this one (ended by the caller)."""
        ...

    def set(self, attributes: Attributes, *, error: str | None = None) -> None:
        """Add attributes; ``error`` (a short reason, no payload) marks the span failed."""
        ...

    def end(self) -> None: ...


class ChainTracer(Protocol):
    """Opens the span of one chain run, under the current span or the given parent."""

    def chain_run(self, event: str, phase: str, meta: object) -> TraceSpan:
        """``meta``: the request's ``_meta``, whose ``traceparent`` is the parent when no
        span is current (an in-code host has no request span of its own)."""
        ...


__all__ = ["AttributeValue", "Attributes", "ChainTracer", "TraceSpan"]

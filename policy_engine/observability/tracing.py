"""OpenTelemetry traces, exported over OTLP/HTTP (protobuf): every span policyc opens.

Optional: the OpenTelemetry SDK and exporter come with the ``otel`` extra
(``pip install 'policyc[otel]'``) and are imported only by :func:`configure`,
so a host that does not trace never loads them and pays one ``is None`` test
per message. Spans:

- ``gateway <method>`` (server kind): one per client request the gateway
  serves, under the client's ``params._meta.traceparent`` when it sent a valid one;
- ``interceptor/invoke`` (server kind): one per invoke ``policyc serve``
  answers, under ``_meta.traceparent`` or else the invocation context's
  ``traceId``/``spanId`` (so a remote interceptor's span joins the caller's trace);
- ``chain <event> <phase>``: one per chain run, under the request's span;
- ``interceptor <name>``: one per interceptor invocation, under the chain run's;
  its ids are the invocation context's ``traceId`` and ``spanId``.

Attributes name things the configuration chose (interceptor, backend), the
protocol's own vocabulary (event, phase, outcome, status), rule codes and
durations: never payload content, never a client's free text.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Final

from policy_engine.wire.constants import method_label
from policy_engine.wire.tracecontext import TraceParent, from_meta

DEFAULT_SERVICE_NAME: Final = "policyc"
TRACES_PATH: Final = "/v1/traces"
ENDPOINT_ENV: Final = "OTEL_EXPORTER_OTLP_ENDPOINT"
TRACES_ENDPOINT_ENV: Final = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
SERVICE_NAME_ENV: Final = "OTEL_SERVICE_NAME"
INSTALL_HINT: Final = "pip install 'policyc[otel]'"


class TracingUnavailable(RuntimeError):
    """Tracing was asked for but the ``otel`` extra is not installed."""


class Span:
    """A :class:`policy_engine.chain.TraceSpan` over an OpenTelemetry span."""

    __slots__ = ("_span", "_tracing", "span_id", "trace_id")

    def __init__(self, tracing: Tracing, span: Any) -> None:
        self._tracing = tracing
        self._span = span
        context = span.get_span_context()
        self.trace_id: str = format(context.trace_id, "032x")
        self.span_id: str = format(context.span_id, "016x")

    def child(self, name: str, attributes: Mapping[str, Any]) -> Span:
        parent = self._tracing._api.set_span_in_context(self._span)
        span = self._tracing._tracer.start_span(name, context=parent, attributes=attributes or None)
        return Span(self._tracing, span)

    def set(self, attributes: Mapping[str, Any], *, error: str | None = None) -> None:
        self._span.set_attributes(attributes)
        if error is not None:
            self._span.set_status(self._tracing._status(self._tracing._error, error))

    def end(self) -> None:
        self._span.end()

    @property
    def traceparent(self) -> str:
        """This span as a W3C ``traceparent`` value, for the next hop's ``_meta``."""
        sampled = 1 if self._span.get_span_context().trace_flags.sampled else 0
        return f"00-{self.trace_id}-{self.span_id}-{sampled:02x}"


class Tracing:
    """A tracer provider with its OTLP/HTTP exporter; the hosts' one entry point."""

    def __init__(self, provider: Any, endpoint: str | None) -> None:
        from opentelemetry import context, trace
        from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, TraceFlags
        from opentelemetry.trace.span import TraceState
        from opentelemetry.trace.status import Status, StatusCode

        self.provider = provider
        self.endpoint = endpoint
        """Where spans go (``None``: the exporter reads the standard environment)."""
        self._tracer = provider.get_tracer("policyc")
        self._api = trace
        self._context = context
        self._non_recording = NonRecordingSpan
        self._span_context = SpanContext
        self._flags = TraceFlags
        self._state = TraceState
        self._server = SpanKind.SERVER
        self._client = SpanKind.CLIENT
        self._status = Status
        self._error = StatusCode.ERROR

    def _parent(self, parent: TraceParent | None) -> Any:
        """An OpenTelemetry context holding a remote parent, or an empty one (a new trace:
        never the process's current context, which is not policyc's to follow)."""
        if parent is None:
            return self._context.Context()
        try:
            state = self._state.from_header([parent.tracestate]) if parent.tracestate else None
        except Exception:  # a malformed tracestate is dropped, the parent kept
            state = None
        remote = self._span_context(
            trace_id=int(parent.trace_id, 16),
            span_id=int(parent.span_id, 16),
            is_remote=True,
            trace_flags=self._flags(parent.flags & 0xFF),
            trace_state=state,
        )
        return self._api.set_span_in_context(self._non_recording(remote))

    @contextmanager
    def request(
        self,
        name: str,
        attributes: Mapping[str, Any],
        parent: TraceParent | None = None,
    ) -> Iterator[Span]:
        """A server span for one request, current for everything the request causes
        (so a chain run under it is its child); ``parent``: the client's, if it sent one."""
        span = self._tracer.start_span(
            name, context=self._parent(parent), kind=self._server, attributes=attributes
        )
        opened = Span(self, span)
        token = _current.set(opened)
        try:
            yield opened
        finally:
            _current.reset(token)
            span.end()

    @contextmanager
    def outgoing(self, name: str, attributes: Mapping[str, Any]) -> Iterator[Span | None]:
        """A client span under the current request span for one message sent onwards
        (``None`` outside a request span: nothing to continue)."""
        current = _current.get()
        if current is None:
            yield None
            return
        parent = self._api.set_span_in_context(current._span)
        span = self._tracer.start_span(
            name, context=parent, kind=self._client, attributes=attributes
        )
        try:
            yield Span(self, span)
        finally:
            span.end()

    def chain_run(self, event: str, phase: str, meta: object) -> Span:
        """The span of one chain run: under the current span, else under ``meta``'s
        ``traceparent`` (an in-code host has no request span), else a new trace."""
        current = _current.get()
        name = f"chain {method_label(event)} {phase}"  # a client may choose the event
        if current is not None:
            return current.child(name, {})
        parent = self._parent(from_meta(meta))
        return Span(self, self._tracer.start_span(name, context=parent))

    def flush(self, timeout_ms: int = 5000) -> bool:
        """Export every ended span now; whether that finished in time."""
        return bool(self.provider.force_flush(timeout_ms))

    def shutdown(self) -> None:
        """Flush and stop the exporter (at exit, or when a test is done)."""
        self.provider.shutdown()


_active: Tracing | None = None
_current: ContextVar[Span | None] = ContextVar("policyc_span", default=None)
"""The request span policyc opened in this task: its own variable, not OpenTelemetry's
current context, so the MCP SDK (which injects the current context into the ``_meta`` of
what it sends, from whichever task sends it) never stamps one request's span on another."""


@contextmanager
def detached() -> Iterator[None]:
    """No request span: for starting a task that outlives the request it was started in
    (a backend's reader loop opened during ``initialize``), which would otherwise parent
    every later message's spans under that ended request."""
    token = _current.set(None)
    try:
        yield
    finally:
        _current.reset(token)


def with_traceparent(params: Any, span: Span | None) -> Any:
    """``params`` with ``_meta.traceparent`` naming ``span`` (the client's
    ``tracestate`` kept, as W3C asks of an intermediary); a copy, never the original.
    Anything but a dict of params is sent as it is."""
    if span is None or not isinstance(params, dict):
        return params
    meta = params.get("_meta")
    meta = dict(meta) if isinstance(meta, dict) else {}
    meta["traceparent"] = span.traceparent
    return {**params, "_meta": meta}


def active() -> Tracing | None:
    """The process's tracing, once :func:`configure` turned it on; else ``None``."""
    return _active


def traces_url(endpoint: str) -> str:
    """``--otlp-endpoint`` is a base URL, as ``OTEL_EXPORTER_OTLP_ENDPOINT`` is: spans go
    to its ``/v1/traces`` (a URL that already ends so is kept)."""
    base = endpoint.rstrip("/")
    return base if base.endswith(TRACES_PATH) else base + TRACES_PATH


def wanted(endpoint: str | None, environ: Mapping[str, str] | None = None) -> bool:
    """Whether to trace: an endpoint was given, or the standard variables name one."""
    env = os.environ if environ is None else environ
    return bool(endpoint or env.get(ENDPOINT_ENV) or env.get(TRACES_ENDPOINT_ENV))


def configure(
    endpoint: str | None = None,
    service_name: str | None = None,
    *,
    exporter: Any = None,
) -> Tracing:
    """Turn tracing on for this process and return it.

    ``endpoint``: the collector's base URL (``--otlp-endpoint``); without it the
    exporter honours ``OTEL_EXPORTER_OTLP_ENDPOINT`` and the other standard
    variables. ``service_name`` defaults to ``OTEL_SERVICE_NAME``, then ``policyc``.
    ``exporter``: another span exporter (a test's in-memory one).
    Raises :class:`TracingUnavailable` when the ``otel`` extra is missing.
    """
    global _active
    try:
        from opentelemetry.sdk.resources import SERVICE_NAME, Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:
        raise TracingUnavailable(
            f"tracing needs the OpenTelemetry SDK ({exc.name} is missing): {INSTALL_HINT}"
        ) from None
    if exporter is None:
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError as exc:
            raise TracingUnavailable(
                f"tracing needs the OTLP/HTTP exporter ({exc.name} is missing): {INSTALL_HINT}"
            ) from None
        exporter = OTLPSpanExporter(endpoint=traces_url(endpoint) if endpoint else None)
    name = service_name or os.environ.get(SERVICE_NAME_ENV) or DEFAULT_SERVICE_NAME
    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: name}))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    if _active is not None:
        _active.shutdown()
    # The provider flushes and stops at exit on its own (``shutdown_on_exit``).
    _active = Tracing(provider, traces_url(endpoint) if endpoint else None)
    return _active


def disable() -> None:
    """Turn tracing off again (flushing what was recorded): for tests and embedders."""
    global _active
    if _active is not None:
        _active.shutdown()
    _active = None


__all__ = [
    "DEFAULT_SERVICE_NAME",
    "ENDPOINT_ENV",
    "INSTALL_HINT",
    "SERVICE_NAME_ENV",
    "TRACES_ENDPOINT_ENV",
    "Span",
    "Tracing",
    "TracingUnavailable",
    "active",
    "configure",
    "disable",
    "traces_url",
    "wanted",
]

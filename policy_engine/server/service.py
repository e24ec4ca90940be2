"""The two SEP-2624 methods, independent of any transport or SDK.

Takes raw JSON params, returns the wire result or raises ``InterceptorError``
with the SEP's code, so every failure reaches the client as a proper JSON-RPC
error (the SDK would answer an unexpected exception with code 0).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import anyio
from pydantic import ValidationError

from policy_engine.observability import metrics
from policy_engine.observability.tracing import Span
from policy_engine.observability.tracing import active as active_tracing
from policy_engine.wire import (
    InterceptorError,
    InvocationContext,
    InvokeParams,
    ListInterceptorsParams,
    MutationResult,
    Principal,
    ValidationResult,
)
from policy_engine.wire.constants import INVOKE_METHOD, method_label
from policy_engine.wire.errors import (
    execution_failed,
    invalid_params,
    not_hooked,
    timed_out,
    unknown_interceptor,
)
from policy_engine.wire.tracecontext import TraceParent, from_ids, from_meta, rule_codes

from .catalog import Catalog, CatalogCache
from .decision_log import Decision, DecisionLog, fired_rules
from .rejections import RejectionLog
from .source import ProviderSource

_REASON_LIMIT = 200
_FAILURES = RejectionLog()
_KNOWN_NAMES_LIMIT = 50


def _strip_meta(raw: Mapping[str, Any] | None) -> dict[str, Any]:
    """Drop the MCP ``_meta`` envelope: it is transport business, not SEP params."""
    return {k: v for k, v in (raw or {}).items() if k != "_meta"}


def _params_error(exc: ValidationError) -> InterceptorError:
    """-32602 naming each bad field; pydantic's input echo is left out on purpose."""
    problems = [
        {"field": ".".join(str(part) for part in err["loc"]) or "params", "problem": err["msg"]}
        for err in exc.errors(include_url=False, include_input=False, include_context=False)
    ]
    fields = list(dict.fromkeys(problem["field"] for problem in problems))
    return invalid_params("invalid params", fields=fields, errors=problems)


def _failure_reason(name: str, exc: BaseException) -> str:
    """The exception's type for the client; its message only in the server's log.

    SEP-2624 (Information Disclosure): detailed errors are logged, never returned
    to untrusted clients, and a message may quote the payload being evaluated.
    A client can make an interceptor fail at will, so the detail is logged the
    first time per interceptor and exception type, and later failures counted.
    """
    kind = type(exc).__name__
    text = f"{kind}: {exc}" if str(exc) else kind
    if len(text) > _REASON_LIMIT:
        text = text[: _REASON_LIMIT - 3] + "..."
    _FAILURES.note(f"interceptor `{name}` failed with {kind}", text)
    return kind


class InterceptorService:
    """Serves ``interceptors/list`` and ``interceptor/invoke`` from a provider source."""

    def __init__(self, source: ProviderSource, decision_log: DecisionLog | None = None) -> None:
        self._source = source
        self._catalogs = CatalogCache()
        self.decision_log = decision_log

    def catalog(self) -> Catalog:
        return self._catalogs.get(self._source())

    def list(self, raw: Mapping[str, Any] | None) -> dict[str, Any]:
        try:
            params = ListInterceptorsParams.model_validate(_strip_meta(raw))
        except ValidationError as exc:
            raise _params_error(exc) from None
        catalog = self.catalog()
        chosen = catalog.descriptors
        if params.event is not None:
            event = params.event
            chosen = tuple(d for d in chosen if d.hooks_event(event))
        return {"interceptors": [d.to_wire() for d in chosen]}

    async def invoke(
        self, raw: Mapping[str, Any] | None, *, principal: Principal | None = None
    ) -> dict[str, Any]:
        """``principal``: the caller a verified token names; it replaces any the caller
        put in the context (only a caller without one, such as a host holding the static
        token, speaks for the principals it serves)."""
        tracing = active_tracing()
        if tracing is None:
            return await self._invoke(raw, principal, None)
        parent = _trace_parent(raw)
        attributes = {"rpc.system": "jsonrpc", "rpc.method": INVOKE_METHOD}
        with tracing.request(INVOKE_METHOD, attributes, parent) as span:
            return await self._invoke(raw, principal, span)

    async def _invoke(
        self, raw: Mapping[str, Any] | None, principal: Principal | None, span: Span | None
    ) -> dict[str, Any]:
        started = time.perf_counter()
        body = _strip_meta(raw)
        params: InvokeParams | None = None
        try:
            try:
                params = InvokeParams.model_validate(body)
            except ValidationError as exc:
                raise _params_error(exc) from None
            if principal is not None:
                params = _as_caller(params, principal)
            params = _in_trace(params, span, raw)
            result = await self._run(self.catalog(), params)
            try:
                wire = result.to_wire()
            except Exception as exc:
                raise execution_failed(params.name, _failure_reason(params.name, exc)) from None
        except InterceptorError as error:
            self._log_error(body, params, error, started)
            self._count(params, "error", started)
            if span is not None:
                self._trace(span, params, "error", started, code=error.code)
            raise
        self._log_result(params, result, started)
        self._count(params, _outcome(result), started)
        if span is not None:
            self._trace(span, params, _outcome(result), started, info=result.info)
        return wire

    def _trace(
        self,
        span: Span,
        params: InvokeParams | None,
        outcome: str,
        started: float,
        *,
        code: int | None = None,
        info: object = None,
    ) -> None:
        """The invoke span's attributes: as the metric's labels, plus rule codes."""
        attributes: dict[str, Any] = {
            "policyc.interceptor": self._known(params),
            "policyc.outcome": outcome,
            "policyc.duration_ms": round((time.perf_counter() - started) * 1000, 3),
        }
        if params is not None and self._known(params) != metrics.UNKNOWN:
            attributes["policyc.event"] = method_label(params.event)
            attributes["policyc.phase"] = params.phase
        codes = rule_codes(info)
        if codes:
            attributes["policyc.rules"] = codes
        if code is not None:
            attributes["rpc.jsonrpc.error_code"] = code
        span.set(attributes, error="error" if code is not None else None)

    def _count(self, params: InvokeParams | None, outcome: str, started: float) -> None:
        """The metric; a name the catalog does not know is not a label (clients choose it)."""
        metrics.decision(self._known(params), outcome, time.perf_counter() - started)

    def _known(self, params: InvokeParams | None) -> str:
        """The interceptor's name if the catalog knows it, else ``(unknown)``."""
        known = params is not None and params.name in self.catalog().by_name
        return params.name if known and params is not None else metrics.UNKNOWN

    async def _run(
        self, catalog: Catalog, params: InvokeParams
    ) -> ValidationResult | MutationResult:
        descriptor = catalog.by_name.get(params.name)
        if descriptor is None:
            known = list(catalog.by_name) if len(catalog.by_name) <= _KNOWN_NAMES_LIMIT else None
            raise unknown_interceptor(params.name, known)
        if not descriptor.hooks_event(params.event, params.phase):
            raise not_hooked(params.name, params.event, params.phase)
        try:
            if params.timeout_ms is None:
                result = await catalog.provider.invoke(params)
            else:
                with anyio.move_on_after(params.timeout_ms / 1000) as scope:
                    result = await catalog.provider.invoke(params)
                if scope.cancelled_caught:
                    raise timed_out(params.name, params.timeout_ms, params.phase)
        except InterceptorError:
            raise
        except Exception as exc:
            raise execution_failed(params.name, _failure_reason(params.name, exc)) from None
        if not isinstance(result, ValidationResult | MutationResult):
            reason = f"provider returned {type(result).__name__}, not an invoke result"
            raise execution_failed(params.name, reason)
        return result

    def _log_result(
        self, params: InvokeParams, result: ValidationResult | MutationResult, started: float
    ) -> None:
        if self.decision_log is None:
            return
        context = params.context
        if isinstance(result, ValidationResult):
            outcome = "valid" if result.valid else "invalid"
            severity = result.effective_severity
            payload, has_payload = None, False
            rules = fired_rules(result.info, result.messages)
        else:
            outcome = "modified" if result.modified else "unmodified"
            severity = None
            payload, has_payload = result.payload, True
            rules = []
        self.decision_log.record(
            Decision(
                interceptor=params.name,
                event=params.event,
                phase=params.phase,
                outcome=outcome,
                duration_ms=(time.perf_counter() - started) * 1000,
                trace_id=context.trace_id if context else None,
                session_id=context.session_id if context else None,
                principal_id=_principal_id(params),
                severity=severity,
                payload=payload,
                has_payload=has_payload,
                rules=rules or None,
            )
        )

    def _log_error(
        self,
        body: Mapping[str, Any],
        params: InvokeParams | None,
        error: InterceptorError,
        started: float,
    ) -> None:
        if self.decision_log is None:
            return
        name: str | None
        event: str | None
        phase: str | None
        trace_id: str | None = None
        session_id: str | None = None
        if params is not None:
            name, event, phase = params.name, params.event, params.phase
            if params.context is not None:
                trace_id, session_id = params.context.trace_id, params.context.session_id
        else:
            name, event, phase = (_str_or_none(body.get(key)) for key in ("name", "event", "phase"))
        self.decision_log.record(
            Decision(
                interceptor=name,
                event=event,
                phase=phase,
                outcome="error",
                duration_ms=(time.perf_counter() - started) * 1000,
                trace_id=trace_id,
                session_id=session_id,
                principal_id=_principal_id(params),
                error_code=error.code,
            )
        )


def _trace_parent(raw: Mapping[str, Any] | None) -> TraceParent | None:
    """The caller's trace: ``_meta.traceparent``, else the context's W3C ``traceId`` and
    ``spanId`` (a policyc chain host sets them to its interceptor span), else none."""
    if not raw:
        return None
    parent = from_meta(raw.get("_meta"))
    if parent is None:
        context = raw.get("context")
        if isinstance(context, Mapping):
            parent = from_ids(context.get("traceId"), context.get("spanId"))
    return parent


def _in_trace(
    params: InvokeParams, span: Span | None, raw: Mapping[str, Any] | None
) -> InvokeParams:
    """The params with the trace in their context: this invoke's span when tracing,
    else the ``_meta.traceparent`` the caller sent; a ``traceId`` the caller put in the
    context itself is left as it is."""
    context = params.context
    own = context.trace_id if context is not None else None
    if own is not None and (span is None or own != span.trace_id):
        return params
    if span is not None:
        trace_id, span_id = span.trace_id, span.span_id
    else:
        parent = from_meta(raw.get("_meta")) if raw else None
        if parent is None:
            return params
        trace_id, span_id = parent.trace_id, parent.span_id
    ids = {"trace_id": trace_id, "span_id": span_id}
    updated = (
        context.model_copy(update=ids)
        if context is not None
        else InvocationContext(trace_id=trace_id, span_id=span_id)
    )
    return params.model_copy(update={"context": updated})


def _as_caller(params: InvokeParams, principal: Principal) -> InvokeParams:
    context = params.context or InvocationContext()
    return params.model_copy(
        update={"context": context.model_copy(update={"principal": principal})}
    )


def _principal_id(params: InvokeParams | None) -> str | None:
    context = params.context if params is not None else None
    principal = context.principal if context is not None else None
    return principal.id if principal is not None else None


def _outcome(result: ValidationResult | MutationResult) -> str:
    if isinstance(result, ValidationResult):
        return "valid" if result.valid else "invalid"
    return "modified" if result.modified else "unmodified"


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None

"""Params and results of ``interceptors/list`` and ``interceptor/invoke``."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_serializer

from ._base import InterceptorType, Phase, Severity, TimeoutMs, WireModel, keep_required_nulls
from .descriptor import InterceptorDescriptor


class ListInterceptorsParams(WireModel):
    event: str | None = None


class ListInterceptorsResult(WireModel):
    interceptors: list[InterceptorDescriptor]


class Principal(WireModel):
    type: Literal["user", "service", "anonymous"]
    id: str | None = None
    claims: dict[str, Any] | None = None


class InvocationContext(WireModel):
    """Who is asking and where in a trace. ``timestamp`` is required by the SEP
    text but some peers omit it (the conformance fixtures send only
    ``sessionId``), so it is optional here.
    """

    principal: Principal | None = None
    trace_id: str | None = None
    span_id: str | None = None
    timestamp: str | None = None
    session_id: str | None = None
    interceptor_state: dict[str, Any] | None = None
    # policyc extension (unknown to the SEP, ignored by other peers): the name of
    # the backend server a gateway routes the message to or received it from.
    server: str | None = None


class InvokeParams(WireModel):
    name: str = Field(min_length=1)
    event: str = Field(min_length=1)
    phase: Phase
    payload: Any
    config: dict[str, Any] | None = None
    timeout_ms: TimeoutMs | None = None
    context: InvocationContext | None = None

    _keep_null_payload = model_serializer(mode="wrap")(keep_required_nulls)


class ValidationMessage(WireModel):
    path: str | None = None
    message: str
    severity: Severity


class Suggestion(WireModel):
    path: str
    value: Any

    _keep_null_value = model_serializer(mode="wrap")(keep_required_nulls)


class _ResultBase(WireModel):
    interceptor: str
    type: InterceptorType
    phase: Phase
    duration_ms: float | None = None
    info: dict[str, Any] | None = None


class ValidationResult(_ResultBase):
    type: Literal["validation"] = "validation"
    valid: bool
    severity: Severity | None = None

    @property
    def effective_severity(self) -> Severity | None:
        """Fail secure: a verdict of invalid that names no severity is an error."""
        return self.severity or (None if self.valid else "error")

    messages: list[ValidationMessage] | None = None
    suggestions: list[Suggestion] | None = None


class MutationResult(_ResultBase):
    type: Literal["mutation"] = "mutation"
    modified: bool
    payload: Any

    # ``payload`` stays in the dump even when it is JSON ``null``: the SEP makes it
    # required, and this holds wherever the result is nested.
    _keep_null_payload = model_serializer(mode="wrap")(keep_required_nulls)


InvokeResult = Annotated[ValidationResult | MutationResult, Field(discriminator="type")]

"""Params and results of ``interceptors/list`` and ``interceptor/invoke``."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_serializer, model_validator

from ._base import InterceptorType, Phase, Severity, TimeoutMs, WireModel, keep_required_nulls
from .descriptor import InterceptorDescriptor
from .finite import find_non_finite


def _finite(value: Any) -> Any:
    """Refuse a NaN or an infinity anywhere in ``value``.

    A context is handed on in its JSON form, where pydantic writes a
    non-finite number as `null`: left alone, a claim of NaN would reach a
    policy (or a remote interceptor) as a quiet `null`. JSON text cannot
    carry one, so only a value built in Python meets this.
    """
    if find_non_finite(value) is not None:
        raise ValueError("holds a non-finite number (NaN or Infinity); JSON has none")
    return value


class ListInterceptorsParams(WireModel):
    event: str | None = None


class ListInterceptorsResult(WireModel):
    interceptors: list[InterceptorDescriptor]


class Principal(WireModel):
    type: Literal["user", "service", "anonymous"]
    id: str | None = None
    claims: dict[str, Any] | None = None

    _finite_claims = field_validator("claims")(_finite)


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

    _finite_state = field_validator("interceptor_state")(_finite)

    @model_validator(mode="after")
    def _finite_extras(self) -> InvocationContext:
        """Unknown keys are kept and handed on too."""
        if self.model_extra:
            _finite(self.model_extra)
        return self


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

"""Chain orchestration types from the SEP: entries, overrides, params, results."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_serializer

from ._base import InterceptorType, Phase, Severity, TimeoutMs, WireModel, keep_required_nulls
from .constants import Mode
from .descriptor import Hook, normalize_mode
from .invoke import InvocationContext, ValidationMessage
from .priority import PriorityHint

ChainStatus = Literal["success", "validation_failed", "mutation_failed", "timeout"]
Side = Literal["sending", "receiving"]


class InterceptorOverrides(WireModel):
    """Invoker-side policy that beats the interceptor's declared defaults.

    ``hooks`` may only narrow the declared hooks; the chain rejects widening.
    """

    fail_open: bool | None = None
    priority_hint: PriorityHint | None = None
    mode: Mode | None = None
    timeout_ms: TimeoutMs | None = None
    hooks: list[Hook] | None = None

    _normalize_mode = field_validator("mode", mode="before")(normalize_mode)


class ChainExecutionParams(WireModel):
    event: str = Field(min_length=1)
    phase: Phase
    payload: Any
    interceptors: list[str] | None = None
    config: dict[str, dict[str, Any]] | None = None
    timeout_ms: TimeoutMs | None = None
    context: InvocationContext | None = None

    _keep_null_payload = model_serializer(mode="wrap")(keep_required_nulls)


class ChainResultEntry(WireModel):
    """One interceptor's outcome inside a chain result (the SEP's flattened shape)."""

    interceptor: str
    type: InterceptorType
    phase: Phase
    modified: bool | None = None
    payload: Any = None
    valid: bool | None = None
    severity: Severity | None = None
    messages: list[ValidationMessage] | None = None
    mode: Literal["audit"] | None = None
    info: dict[str, Any] | None = None
    error: str | None = None
    duration_ms: float = 0.0


class ValidationSummary(WireModel):
    errors: int = 0
    warnings: int = 0
    infos: int = 0


class AbortedAt(WireModel):
    """Where and why a chain stopped. ``timeoutMs`` is set only for timeouts: the
    limit that expired, which the SEP's timeout error reports.
    """

    interceptor: str
    reason: str
    type: Literal["validation", "mutation", "timeout"]
    timeout_ms: int | None = None


class ChainExecutionResult(WireModel):
    status: ChainStatus
    event: str
    phase: Phase
    results: list[ChainResultEntry]
    final_payload: Any = None
    validation_summary: ValidationSummary
    total_duration_ms: float
    aborted_at: AbortedAt | None = None

    @property
    def allowed(self) -> bool:
        return self.status == "success"

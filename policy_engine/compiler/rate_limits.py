"""Rate limits and quotas at run time: count each request against a counter per key.

A validator's limits run after its other rules (and its flow rules), all at
once, and a request counts only when it is allowed by every rule of that
validator, its limits included: a request the validator refuses reached
nothing, so it spends nothing, and a client cannot use refused requests to
drain a budget. The store counts all of a request's limits or none of them
(one atomic step), so a request refused by one limit spends nothing on the
others. A request a later interceptor refuses has already counted: a
validator cannot see the future.

A limit's key is the values of its `by` expressions; a request missing one
of them is refused (there is no shared "nobody" counter a client could
drain for everyone else). Keys reach the store only as keyed fingerprints,
so key names are bounded and hold no client text.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..flow import Fingerprinter
from ..language import ast
from ..language.formatter import render_operand
from ..limits import Charge, LimitStore, LimitStoreError, MemoryLimitStore, Verdict
from ..wire import ValidationMessage, ValidationResult
from ..wire.errors import execution_failed
from .conditions import (
    CompileEnv,
    ConditionFn,
    EvalContext,
    OperandFn,
    compile_condition,
    compile_operand,
)
from .jsonpath import CompiledPath, PayloadTooDeep
from .run_now import finish_now, needs_invoke
from .trace import RuleEvent, RuleRef, Trace
from .validators import render_message, replace_result

_RANK = {None: -1, "info": 0, "warn": 1, "error": 2}


@dataclass(frozen=True)
class CompiledLimit:
    ref: RuleRef
    kind: str
    limit: float
    window_s: float
    window: str
    """As people read it: `minute`, `10 minutes`."""
    amount: CompiledPath | None
    amount_source: str | None
    keys: tuple[OperandFn, ...]
    key_sources: tuple[str, ...]
    guard: ConditionFn | None
    fail_open: bool
    message: str | None

    @property
    def describe(self) -> str:
        noun = "request" if self.limit == 1 else "requests"
        what = noun if self.amount_source is None else f"of `{self.amount_source}`"
        return f"{self.limit:g} {what} per {self.window}"

    def default_message(self, retry_after_ms: int | None) -> str:
        if retry_after_ms is None:
            return f"quota exceeded: one request asks for more than {self.describe}"
        kind = "rate limit" if self.amount is None else "quota"
        return f"{kind} exceeded: at most {self.describe}; retry in {retry_after_ms} ms"


def compile_limit(rule: ast.RateLimit, ref: RuleRef, env: CompileEnv) -> CompiledLimit:
    guard = None
    if rule.guard is not None:
        guard = compile_condition(rule.guard.condition, env, negate=rule.guard.unless)
    per = "" if rule.per is None else f"{rule.per:g} "
    return CompiledLimit(
        ref,
        rule.kind,
        float(rule.limit),
        rule.window_seconds,
        f"{per}{rule.unit}",
        None if rule.amount is None else env.path(rule.amount.source),
        None if rule.amount is None else rule.amount.source,
        tuple(compile_operand(key, env) for key in rule.keys),
        tuple(render_operand(key) for key in rule.keys),
        guard,
        rule.fail_open,
        rule.message,
    )


@dataclass(frozen=True)
class LimitScope:
    """One validator's limits: built once per policy set."""

    name: str
    limits: list[CompiledLimit]


@dataclass(frozen=True)
class _Planned:
    limit: CompiledLimit
    charge: Charge


class RateLimitRuntime:
    """The limits of a policy set and the counters they share."""

    def __init__(
        self, store: LimitStore | None = None, fingerprinter: Fingerprinter | None = None
    ) -> None:
        self.store: LimitStore = store if store is not None else MemoryLimitStore()
        self.fingerprinter = fingerprinter or Fingerprinter()
        self._rules: dict[tuple[str, str], str] = {}
        """(validator, rule code) -> the rule's fingerprint, which names its key space."""

    async def apply(
        self, scope: LimitScope, ctx: EvalContext, result: ValidationResult, trace: Trace | None
    ) -> ValidationResult:
        """The validator's result with its limits applied; store failures fail closed."""
        return await self._apply(scope, ctx, result, trace)

    def apply_now(
        self, scope: LimitScope, ctx: EvalContext, result: ValidationResult, trace: Trace | None
    ) -> ValidationResult:
        """`apply` for synchronous callers: only the in-process store can answer at once."""
        if not isinstance(self.store, MemoryLimitStore):
            raise needs_invoke(scope.name, "limits")
        return finish_now(self._apply(scope, ctx, result, trace), "in-process limit store")

    async def _apply(
        self, scope: LimitScope, ctx: EvalContext, result: ValidationResult, trace: Trace | None
    ) -> ValidationResult:
        if not result.valid:  # refused by another rule: reached nothing, spends nothing
            return result
        planned: list[_Planned] = []
        refused: list[tuple[CompiledLimit, str]] = []
        for limit in scope.limits:
            if limit.guard is not None and limit.guard(ctx) is None:
                continue
            charge = self._charge(scope.name, limit, ctx)
            if isinstance(charge, str):
                refused.append((limit, charge))
            else:
                planned.append(_Planned(limit, charge))
        if refused:  # fail closed before counting anything
            return _refuse(result, refused, None, trace)
        if not planned:
            return result
        try:
            verdict = await self.store.charge([p.charge for p in planned])
        except LimitStoreError as exc:
            return _unavailable(scope.name, planned, result, str(exc), trace)
        return _judged(scope.name, planned, verdict, result, trace)

    def _charge(self, interceptor: str, limit: CompiledLimit, ctx: EvalContext) -> Charge | str:
        """The limit's charge for this message, or why it is refused without counting."""
        values: list[Any] = []
        for source, read in zip(limit.key_sources, limit.keys, strict=True):
            found = read(ctx)
            if not found:
                return f"limit `{limit.ref.code}` counts by {source}, which this message lacks"
            values.append(found[0][0])
        amount = 1.0
        if limit.amount is not None:
            taken = _amount(limit.amount, ctx.payload)
            if taken is None:
                return (
                    f"limit `{limit.ref.code}` counts `{limit.amount_source}`, which is not "
                    "a non-negative number here"
                )
            amount = taken
        rule = self._rules.get((interceptor, limit.ref.code))
        if rule is None:
            rule = self.fingerprinter.of(json.dumps(["limit", interceptor, limit.ref.code]))
            self._rules[(interceptor, limit.ref.code)] = rule
        material = json.dumps([rule, *values], sort_keys=True, separators=(",", ":"))
        return Charge(rule, self.fingerprinter.of(material), amount, limit.limit, limit.window_s)


def _amount(path: CompiledPath, payload: Any) -> float | None:
    try:
        found = path.values(payload)
    except PayloadTooDeep:
        return None
    if len(found) != 1:
        return None
    value = found[0]
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not math.isfinite(value) or value < 0:
        return None
    return float(value)


def _judged(
    name: str,
    planned: Sequence[_Planned],
    verdict: Verdict,
    result: ValidationResult,
    trace: Trace | None,
) -> ValidationResult:
    retry_ms = None if verdict.retry_after_s is None else math.ceil(verdict.retry_after_s * 1000)
    if trace is not None:
        for p, level, over in zip(planned, verdict.levels, verdict.refused, strict=True):
            counted = level + p.charge.amount if verdict.allowed else level
            state = "over the limit" if over else ("counted" if verdict.allowed else "not counted")
            keys = f" by {', '.join(p.limit.key_sources)}" if p.limit.key_sources else ""
            trace.counters.append(
                f"limit {p.limit.ref.code}: counter {counted:g} of {p.limit.describe}{keys} "
                f"({state}; window {p.limit.window_s:g} s)"
            )
    if verdict.allowed:
        return result
    refusals = []
    for p, over in zip(planned, verdict.refused, strict=True):
        if over:
            text = p.limit.message or p.limit.default_message(retry_ms)
            refusals.append((p.limit, render_message(text, {"interceptor": name})))
    return _refuse(result, refusals, retry_ms, trace)


def _refuse(
    result: ValidationResult,
    refusals: Sequence[tuple[CompiledLimit, str]],
    retry_ms: int | None,
    trace: Trace | None,
) -> ValidationResult:
    messages = list(result.messages or [])
    info = dict(result.info or {})
    rules = list(info.get("rules", []))
    for limit, text in refusals:
        messages.append(ValidationMessage(message=text, severity="error"))
        rules.append({"rule": limit.ref.code, "source": limit.ref.source})
        if trace is not None:
            trace.events.append(RuleEvent(limit.ref, None, text, "error"))
    info["rules"] = rules
    if retry_ms is not None:
        info["retryAfterMs"] = retry_ms
    return replace_result(result, messages, "error", info)


def _unavailable(
    name: str,
    planned: Sequence[_Planned],
    result: ValidationResult,
    reason: str,
    trace: Trace | None,
) -> ValidationResult:
    """The store cannot answer: refuse (raise), unless every limit asked fails open."""
    if not all(p.limit.fail_open for p in planned):
        raise execution_failed(name, reason)
    messages = list(result.messages or [])
    for p in planned:
        text = f"limit `{p.limit.ref.code}` not enforced: {reason}"
        messages.append(ValidationMessage(message=text, severity="warn"))
        if trace is not None:
            trace.events.append(RuleEvent(p.limit.ref, None, text, "warn"))
    severity = result.severity if _RANK[result.severity] >= _RANK["warn"] else "warn"
    return replace_result(result, messages, severity, dict(result.info or {}))

"""Validator blocks: every rule is evaluated; the result follows the SEP.

`valid` is false exactly when an error-severity (`deny`) rule fired; the
top-level severity is the highest that fired. A message carries the path of
the offending value and never the value itself unless the rule's message
asks for it with `{value}`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..language import ast
from ..language.path_syntax import format_location
from ..wire import Severity, ValidationMessage, ValidationResult
from .conditions import CompileEnv, ConditionFn, EvalContext, Location, compile_condition
from .trace import RuleEvent, RuleRef, Trace, elapsed_ms

SEVERITIES: dict[str, Severity] = {"deny": "error", "warn": "warn", "info": "info"}
_RANK = {"info": 0, "warn": 1, "error": 2}
MAX_ECHO = 80


def render_message(template: str, values: dict[str, str]) -> str:
    """Replace `{name}` placeholders in one pass; `{{` and `}}` are literal braces.

    One pass matters: a substituted path may itself contain `{value}` (it
    comes from payload keys), and expanding that would echo a value the rule
    never asked for. Unknown placeholders stay as written.
    """
    out: list[str] = []
    i = 0
    n = len(template)
    while i < n:
        char = template[i]
        if char in "{}" and template.startswith(char * 2, i):
            out.append(char)
            i += 2
            continue
        if char == "{":
            end = template.find("}", i + 1)
            key = template[i + 1 : end] if end > 0 else None
            if key is not None and key in values:
                out.append(values[key])
                i = end + 1
                continue
        out.append(char)
        i += 1
    return "".join(out)


def echo(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= MAX_ECHO else text[: MAX_ECHO - 1] + "…"


@dataclass
class CompiledCheck:
    """A check whose ``condition`` already says when it fires (`unless` compiled as
    the condition's negation, which keeps the witness: the value that failed)."""

    ref: RuleRef
    severity: Severity
    condition: ConditionFn
    message: str

    def fire(self, ctx: EvalContext) -> Location | None:
        return self.condition(ctx)


def compile_check(lowered: ast.CheckRule, ref: RuleRef, env: CompileEnv) -> CompiledCheck:
    """A core check rule (sugar was lowered by the pipeline's desugar stage)."""
    message = lowered.message or f"policy rule {ref.code} matched"
    return CompiledCheck(
        ref,
        SEVERITIES[lowered.severity],
        compile_condition(lowered.condition, env, negate=lowered.unless),
        message,
    )


def run_validator(
    name: str,
    checks: list[CompiledCheck],
    ctx: EvalContext,
    trace: Trace | None,
    started: float,
) -> ValidationResult:
    messages: list[ValidationMessage] = []
    fired: list[dict[str, Any]] = []
    highest: Severity | None = None
    for check in checks:
        if trace is not None:
            trace.evaluated.append(check.ref)
        location = check.fire(ctx)
        if location is None:
            continue
        path = format_location(location) if location else None
        text = check.message
        if "{" in text:
            text = render_message(
                text,
                {
                    "path": path or "$",
                    "event": ctx.event,
                    "phase": ctx.phase,
                    "interceptor": name,
                    "value": _value_at(ctx.payload, location),
                },
            )
        messages.append(ValidationMessage(path=path, message=text, severity=check.severity))
        fired.append({"rule": check.ref.code, "source": check.ref.source})
        if highest is None or _RANK[check.severity] > _RANK[highest]:
            highest = check.severity
        if trace is not None:
            trace.events.append(RuleEvent(check.ref, path, text, check.severity))
    return ValidationResult(
        interceptor=name,
        phase=ctx.phase,  # type: ignore[arg-type]
        duration_ms=elapsed_ms(started),
        valid=highest != "error",
        severity=highest,
        messages=messages or None,
        # Which rule produced each message, in the same order: `file:line`.
        info={"rules": fired} if fired else None,
    )


def _value_at(payload: Any, location: Location) -> str:
    value = payload
    for step in location:
        try:
            value = value[step]
        except (KeyError, IndexError, TypeError):
            return ""
    return echo(value)

"""Validator blocks: every rule is evaluated; the result follows the SEP.

`valid` is false exactly when an error-severity (`deny`) rule fired; the
top-level severity is the highest that fired. A message carries the path of
the offending value and never the value itself unless the rule's message
asks for it with `{value}`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ..language import ast
from ..language.check_messages import MESSAGE_PLACEHOLDERS
from ..language.path_syntax import format_location
from ..wire import Severity, ValidationMessage, ValidationResult
from .conditions import CompileEnv, ConditionFn, EvalContext, Location, compile_condition
from .trace import RuleEvent, RuleRef, Trace, elapsed_ms

SEVERITIES: dict[str, Severity] = {"deny": "error", "warn": "warn", "info": "info"}
_RANK = {"info": 0, "warn": 1, "error": 2}
MAX_ECHO = 80
# What a check's message may name.
PLACEHOLDERS = MESSAGE_PLACEHOLDERS


@dataclass(frozen=True)
class MessageTemplate:
    """A rule message split once into literal text and the placeholders it uses.

    Splitting at compile time, not per message, and computing only the
    placeholders a message names (an echoed `{value}` encodes JSON) keeps a
    firing rule cheap.
    """

    # Literal text at even positions, a placeholder's name at odd ones.
    pieces: tuple[str, ...]

    @cached_property
    def keys(self) -> frozenset[str]:
        """The placeholders the message names (read each time a rule fires)."""
        return frozenset(self.pieces[1::2])

    @cached_property
    def written(self) -> str:
        """The message as the policy wrote it, placeholders unfilled: what a decision log
        keeps (a filled `{value}` or `{path}` comes from the payload)."""
        return "".join(p if k % 2 == 0 else "{" + p + "}" for k, p in enumerate(self.pieces))

    @classmethod
    def parse(cls, template: str, known: Iterable[str]) -> MessageTemplate:
        """`{name}` for each name in ``known`` is a placeholder; `{{` and `}}` are
        literal braces; any other brace stays as written."""
        names = set(known)
        pieces: list[str] = []
        text: list[str] = []
        i = 0
        n = len(template)
        while i < n:
            char = template[i]
            if char in "{}" and template.startswith(char * 2, i):
                text.append(char)
                i += 2
                continue
            if char == "{":
                end = template.find("}", i + 1)
                key = template[i + 1 : end] if end > 0 else None
                if key is not None and key in names:
                    pieces += ["".join(text), key]
                    text = []
                    i = end + 1
                    continue
            text.append(char)
            i += 1
        pieces.append("".join(text))
        return cls(tuple(pieces))

    def render(self, values: Mapping[str, str]) -> str:
        """The message, in one pass: a substituted path may itself contain
        `{value}` (it comes from payload keys), and expanding that would echo
        a value the rule never asked for."""
        pieces = self.pieces
        if len(pieces) == 1:
            return pieces[0]
        return "".join(piece if k % 2 == 0 else values[piece] for k, piece in enumerate(pieces))


def render_message(template: str, values: Mapping[str, str]) -> str:
    """Replace `{name}` placeholders in one pass; unknown placeholders stay as written."""
    return MessageTemplate.parse(template, values).render(values)


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
    message: MessageTemplate


def compile_check(lowered: ast.CheckRule, ref: RuleRef, env: CompileEnv) -> CompiledCheck:
    """A core check rule (sugar was lowered by the pipeline's desugar stage)."""
    message = lowered.message or f"policy rule {ref.code} matched"
    return CompiledCheck(
        ref,
        SEVERITIES[lowered.severity],
        compile_condition(lowered.condition, env, negate=lowered.unless),
        MessageTemplate.parse(message, PLACEHOLDERS),
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
        location = check.condition(ctx)  # a Location where it fired, else None
        if location is None:
            continue
        path = format_location(location) if location else None
        template = check.message
        if len(template.pieces) == 1:
            text = template.pieces[0]
        else:
            values = {
                "path": path or "$",
                "event": ctx.event,
                "phase": ctx.phase,
                "interceptor": name,
            }
            if "value" in template.keys:
                values["value"] = _value_at(ctx.payload, location)
            text = template.render(values)
        messages.append(
            ValidationMessage.trusted({"path": path, "message": text, "severity": check.severity})
        )
        fired.append(
            {"rule": check.ref.code, "source": check.ref.source, "message": template.written}
        )
        if highest is None or _RANK[check.severity] > _RANK[highest]:
            highest = check.severity
        if trace is not None:
            trace.events.append(RuleEvent(check.ref, path, text, check.severity))
    # Built unchecked (`WireModel.trusted`): every value is of its field's type,
    # ``phase`` one the invoke was refused for unless the interceptor hooks it.
    return ValidationResult.trusted(
        {
            "interceptor": name,
            "phase": ctx.phase,
            "duration_ms": elapsed_ms(started),
            "valid": highest != "error",
            "severity": highest,
            "messages": messages or None,
            # Which rule produced each message, in the same order: `file:line`.
            "info": {"rules": fired} if fired else None,
        }
    )


def _value_at(payload: Any, location: Location) -> str:
    value = payload
    for step in location:
        try:
            value = value[step]
        except (KeyError, IndexError, TypeError):
            return ""
    return echo(value)


def replace_result(
    result: ValidationResult,
    messages: list[ValidationMessage],
    severity: Severity | None,
    info: dict[str, Any],
) -> ValidationResult:
    """``result`` with session-state rules' (flow, limit) messages and verdict merged in."""
    return result.model_copy(
        update={
            "messages": messages,
            "severity": severity,
            "valid": severity != "error",
            "info": info,
        }
    )

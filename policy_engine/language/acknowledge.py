"""Deliberate warnings: `acknowledge CODE` on a block or a rule silences that lint there.

A warn-only validator (W304) or a rule that is meant never to fire in one
deployment (W301) can then check clean under `--strict` without switching to
audit mode. An acknowledgement that silences nothing is itself a warning
(W309), so stale ones do not pile up; errors cannot be acknowledged.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from . import ast
from .diagnostics import Code, Diagnostic, Span


@dataclass
class _Ack:
    code: str
    scope: Span  # the block or rule it covers
    span: Span  # where it is written
    used: bool = False


def _contains(outer: Span, inner: Span) -> bool:
    return (
        outer.file == inner.file
        and (outer.line, outer.column) <= (inner.line, inner.column)
        and (inner.end_line, inner.end_column) <= (outer.end_line, outer.end_column)
    )


def _acknowledgements(files: Iterable[ast.PolicyFile]) -> list[_Ack]:
    """Rule acknowledgements first, so the narrowest scope is used up before the block's."""
    rules: list[_Ack] = []
    blocks: list[_Ack] = []
    for policy in files:
        for item in policy.items:
            if not isinstance(item, ast.Interceptor):
                continue
            for statement in item.statements:
                if isinstance(statement, ast.Acknowledge):
                    blocks += [_Ack(c, item.span, statement.span) for c in statement.codes]
                elif isinstance(statement, ast.VALIDATOR_RULES + ast.MUTATOR_RULES):
                    codes = statement.acknowledged
                    rules += [_Ack(c, statement.span, statement.span) for c in codes]
    return rules + blocks


def apply_acknowledgements(
    files: Iterable[ast.PolicyFile], diagnostics: list[Diagnostic]
) -> list[Diagnostic]:
    acks = _acknowledgements(files)
    if not acks:
        return diagnostics
    kept: list[Diagnostic] = []
    for found in diagnostics:
        ack = None
        if not found.is_error:
            ack = next(
                (a for a in acks if a.code == found.code and _contains(a.scope, found.span)), None
            )
        if ack is None:
            kept.append(found)
        else:
            ack.used = True
    for ack in acks:
        if ack.used:
            continue
        if ack.code.startswith("E"):
            message = f"`{ack.code}` is an error and cannot be acknowledged"
            help = "fix the error; only warnings (`W...`) can be acknowledged"
        else:
            message = f"acknowledgement of `{ack.code}` matches no warning here"
            help = "remove it, or move it to the block or rule that has the warning"
        kept.append(Diagnostic(Code.W309, message, ack.span, help))
    return kept

"""W313: `any`/`all` over a context reference, which names one value, not a list's elements.

`any context.principal.claims.roles in ["admin"]` reads as "some role is
admin", but a context reference is one value (here the whole list), so the
test compares the list itself and never holds. Membership of one value in a
context list is written the other way round: `"admin" in context...roles`.
"""

from __future__ import annotations

from collections.abc import Iterator

from . import ast
from .codes import Code
from .diagnostics import Diagnostic
from .model import ResolvedInterceptor
from .walk import iter_nodes

_QUANTIFIED = (ast.Compare, ast.Matches, ast.Like, ast.TextTest, ast.In, ast.IsType)


def lint_context_quantifiers(interceptor: ResolvedInterceptor) -> Iterator[Diagnostic]:
    for rule in interceptor.rules:
        for node in iter_nodes(rule):
            if not isinstance(node, _QUANTIFIED) or node.quantifier is None:
                continue
            subject = node.left if isinstance(node, ast.Compare) else node.subject
            if not isinstance(subject, ast.ContextRef):
                continue
            name = "context." + ".".join(subject.parts)
            example = (
                f'`"VALUE" in {name}` for membership'
                if isinstance(node, ast.In)
                else "a payload path with `[*]` to test each element"
            )
            yield Diagnostic(
                Code.W313,
                f"`{node.quantifier}` over `{name}` tests its whole value once, not each element",
                subject.span if subject.span.line else node.span,
                f"a context reference names one value; write {example}",
            )

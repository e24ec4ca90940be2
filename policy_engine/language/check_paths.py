"""Every JSONPath must parse, and must fit the payload of some event it runs on.

The payload is the request ``params`` or the response ``result`` (see
docs/payloads.md), so `$.params.name` is a classic mistake worth catching.
A path is reported only when it fits none of the hooked (event, phase)
pairs with a known schema: a redactor hooked on both phases may rightly
name a field that exists only in responses.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..wire.constants import Phase
from . import ast
from .diagnostics import Code, Diagnostic, Span
from .model import ResolvedInterceptor
from .path_syntax import PathSyntax, PathSyntaxError, parse_path
from .payload_schema import check_path, known_schema
from .walk import find


def parse_checked(ref: ast.PathRef) -> tuple[PathSyntax | None, Diagnostic | None]:
    try:
        return parse_path(ref.source), None
    except PathSyntaxError as exc:
        span = ref.span
        if exc.column is not None and span.line == span.end_line:
            column = min(span.column + exc.column, span.end_column - 1)
            span = Span(span.file, span.line, column, span.line, column + 1)
        return None, Diagnostic(
            Code.E202, f"invalid JSONPath `{ref.source}`: {exc.message}", span, exc.help
        )


def _other_phase_hint(pairs: list[tuple[str, Phase]], path: PathSyntax) -> str | None:
    """A path that fits the other phase's payload is a wrong hook, not a wrong path."""
    for event, phase in pairs:
        other: Phase = "response" if phase == "request" else "request"
        if known_schema(event, other) and check_path(event, other, path) is None:
            return f"`{path.source}` is in the {event} {other} payload; hook `on {event} {other}`"
    return None


def check_interceptor_paths(interceptor: ResolvedInterceptor) -> Iterator[Diagnostic]:
    pairs = [(e, p) for e, p in interceptor.hooked() if known_schema(e, p)]
    unknown = any(not known_schema(e, p) for e, p in interceptor.hooked())
    for rule in interceptor.rules:
        for ref in find(rule, ast.PathRef):
            if ref.relative:
                yield Diagnostic(
                    Code.E202,
                    f"`{ref.source}` reads the element of a filter, and this is not in one",
                    ref.span,
                    "start a rule's path with `$`; `@` is the element inside a filter such as "
                    '`$.tools[?(@.name like "*_admin")]`',
                )
                continue
            path, problem = parse_checked(ref)
            if problem is not None:
                yield problem
                continue
            if path is None or not pairs or unknown:
                continue
            problems = [check_path(event, phase, path) for event, phase in pairs]
            if all(p is not None for p in problems):
                first = problems[0]
                assert first is not None
                yield Diagnostic(
                    Code.E203, first.message, ref.span, _other_phase_hint(pairs, path) or first.help
                )

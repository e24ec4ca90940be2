"""W314: `..*[?(...)]` reads as "every value at any depth that passes", and is not.

By JSONPath's own rules (RFC 9535, and jsonpath-ng, which the engine
agrees with), `$..*` selects every value below the root and the filter
after it then tests the *members* of each of those values. The root's own
members (`$.name`, a top-level string) are never a candidate, so
`deny if exists $..*[?(@ matches /secret/)]` lets `{"name": "secret"}`
through. The descendant segment with the filter in it, `$..[?(...)]`, tests
the members of the root and of every value below it: what the rule meant.
The engine keeps the standard meaning and says what to write.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from . import ast
from .codes import Code
from .diagnostics import Diagnostic, Span
from .model import ResolvedInterceptor
from .path_syntax import Descend, Filter, PathSyntaxError, Wildcard, parse_path
from .walk import find

_WILDCARD_FILTER = re.compile(r"\.\.\s*(\*|\[\s*\*\s*\])\s*(?=\[\s*\?)")


def _has_wildcard_filter(source: str) -> bool:
    try:
        steps = parse_path(source).steps
    except PathSyntaxError:
        return False  # E202 says what is wrong with it
    return any(
        isinstance(a, Descend) and isinstance(b, Wildcard) and isinstance(c, Filter)
        for a, b, c in zip(steps, steps[1:], steps[2:], strict=False)
    )


def lint_descendant_filters(interceptor: ResolvedInterceptor) -> Iterator[Diagnostic]:
    for rule in interceptor.rules:
        for ref in find(rule, ast.PathRef):
            match = _WILDCARD_FILTER.search(ref.source)
            if ref.relative or match is None or not _has_wildcard_filter(ref.source):
                continue
            fixed = _WILDCARD_FILTER.sub("..", ref.source)
            base = ref.source[: match.start()] or "$"
            span = ref.span
            if span.line == span.end_line and span.end_column - span.column == len(ref.source):
                start = span.column + match.start()
                span = Span(span.file, span.line, start, span.line, start + len(match.group(0)))
            yield Diagnostic(
                Code.W314,
                f"`{match.group(0)}[?(...)]` never tests the values directly under `{base}` "
                f"(a top-level string is skipped): the filter tests the members of each value "
                f"`..*` selects, not the value itself",
                span,
                f"write `{fixed}`: a filter right after `..` tests every value at any depth, "
                f"the top level included",
            )

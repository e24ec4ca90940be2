"""Checks of rate limits and quotas (`limit rate`, `limit total`): numbers, windows, failing open.

Paths and context fields in a limit are checked where every rule's are
(check_paths.py, resolve.py); this module checks what only a limit has.
"""

from __future__ import annotations

from collections.abc import Iterator

from . import ast
from .codes import Code
from .diagnostics import Diagnostic
from .model import ResolvedInterceptor
from .path_steps import Descend, Filter, PathSyntaxError, Slice, Wildcard
from .path_syntax import parse_path

MAX_CALLS = 100_000
"""`calls N` in a test block: enough to cross any limit a test needs to, bounded."""
MAX_WINDOW_SECONDS = 366 * 86400
"""A year and a day: longer windows are a budget policyc is the wrong place to keep."""


def check_rate_limit(rule: ast.RateLimit, interceptor: ResolvedInterceptor) -> Iterator[Diagnostic]:
    if rule.kind == "rate" and (not isinstance(rule.limit, int) or rule.limit < 1):
        yield Diagnostic(
            Code.E211,
            f"a rate limit must be a whole number of at least 1, not `{rule.limit}`",
            rule.span,
            "write how many requests a window allows, e.g. `limit rate 60 per minute`",
        )
    elif rule.kind == "total" and not rule.limit > 0:
        yield Diagnostic(
            Code.E211,
            f"a total limit must be a positive number, not `{rule.limit}`",
            rule.span,
            "write the budget a window allows, e.g. `limit total $.maxTokens 100000 per day`",
        )
    if rule.per is not None and not rule.per > 0:
        yield Diagnostic(
            Code.E211, f"a window must be longer than zero, not `{rule.per}`", rule.span
        )
    elif rule.window_seconds > MAX_WINDOW_SECONDS:
        yield Diagnostic(
            Code.E211,
            f"a window of {rule.window_seconds:g} seconds is longer than the longest "
            f"({MAX_WINDOW_SECONDS // 86400} days)",
            rule.span,
        )
    if rule.amount is not None and _selects_many(rule.amount.source):
        yield Diagnostic(
            Code.E216,
            f"`{rule.amount.source}` can select several values; a total counts one number",
            rule.amount.span,
            "name one field, e.g. `$.maxTokens` (a message whose path holds several "
            "values would be refused)",
        )
    for key in rule.keys:
        if isinstance(key, ast.PathRef) and _selects_many(key.source):
            yield Diagnostic(
                Code.E216,
                f"`{key.source}` can select several values; a key is one value",
                key.span,
                "name one field, e.g. `$.name` (only the first value found would count)",
            )
    if rule.fail_open:
        yield Diagnostic(
            Code.W340,
            "this limit lets every request through while its store cannot answer",
            rule.span,
            "a client that can slow or overload the store escapes the limit; remove "
            "`failing open` unless availability matters more than the limit, and acknowledge it",
        )


def _selects_many(source: str) -> bool:
    try:
        steps = parse_path(source).steps
    except PathSyntaxError:
        return False  # reported where every path is checked
    return any(isinstance(step, Wildcard | Filter | Slice | Descend) for step in steps)

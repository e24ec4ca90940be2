"""Path filters in the policy language: `$.tools[?(@.name like "*_admin")]`.

A filter selects the elements (or members) of a list (or object) that pass a
condition evaluated on each one, `@`. Plain JSONPath filters
(`[?(@.type == 'text')]`) are parsed by jsonpath-ng; a filter that uses the
language's own predicates (`like`, `matches`, `in`, `not`, `and`, `or`, `is`,
the string functions) is cut out of the path, parsed with the policy
grammar's `condition` rule and put back as a `Filter` step carrying that
condition, so a filter means exactly what the same condition means in a rule.

A filter condition reads only the element: `@` paths and literals. `$`,
`param`, `context`, `event` and `phase` belong in the rule's guard.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from typing import Any

from lark import Lark
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, VisitError

from . import ast
from .build_ast import AstBuilder, AstBuildError
from .grammar import grammar_path
from .parser_tables import load
from .path_steps import Field, Filter, PathSyntax, PathSyntaxError, Step
from .walk import iter_nodes

PLACEHOLDER = "\x01"
_LANGUAGE_WORDS = (
    "like",
    "matches",
    "not",
    "and",
    "or",
    "in",
    "is",
    "exists",
    "missing",
    "contains",
    "starts_with",
    "ends_with",
    "lower",
    "upper",
    "length",
    "keys",
    "normalize",
    "url_decode",
    "host",
    "scheme",
    "path",
    "in_domain",
    "any",
    "all",
)
_ELEMENT_ONLY_HELP = (
    "a filter tests each element `@` against literals; test {what} in the rule's `if` guard"
)


@cache
def condition_parser() -> Lark:
    return load(grammar_path().read_text(encoding="utf-8"), "condition", {})


def _skip_quoted(text: str, start: int) -> int:
    """The index just after the string or regex opened at ``start`` (or len(text))."""
    quote = text[start]
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == quote:
            return i + 1
        i += 1
    return len(text)


def cut_filters(source: str) -> tuple[str, list[tuple[str, int]]] | None:
    """``source`` with each top-level ``[?...]`` replaced by a same-length placeholder name.

    Returns the rewritten text and each filter's body with its column, or None
    when there is no filter or one is not closed (jsonpath-ng's error says it best).
    """
    out: list[str] = []
    bodies: list[tuple[str, int]] = []
    i = 0
    while i < len(source):
        char = source[i]
        if char in "'\"":
            end = _skip_quoted(source, i)
            out.append(source[i:end])
            i = end
            continue
        if not source.startswith("[?", i):
            out.append(char)
            i += 1
            continue
        depth = 0
        j = i
        while j < len(source):
            c = source[j]
            if c in "'\"/" and j > i + 1:
                j = _skip_quoted(source, j)
                continue
            if c == "[":
                depth += 1
            elif c == "]":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        if j >= len(source):
            return None
        body = source[i + 2 : j].strip()
        column = i + 2 + (len(source[i + 2 : j]) - len(source[i + 2 : j].lstrip()))
        if body.startswith("("):
            if not body.endswith(")"):
                return None
            body, column = body[1:-1], column + 1
        name = f"{PLACEHOLDER}{len(bodies)}{PLACEHOLDER}"
        width = j + 1 - i
        out.append(f"['{name}{' ' * max(0, width - len(name) - 4)}']")
        bodies.append((body, column))
        i = j + 1
    if not bodies:
        return None
    return "".join(out), bodies


def _double_quoted(body: str) -> str:
    """Single-quoted JSONPath strings become the language's double-quoted ones."""
    out: list[str] = []
    i = 0
    while i < len(body):
        char = body[i]
        if char in '"/':
            end = _skip_quoted(body, i)
            out.append(body[i:end])
            i = end
        elif char == "'":
            end = _skip_quoted(body, i)
            inner = body[i + 1 : end - 1].replace("\\'", "'")
            out.append(json.dumps(inner, ensure_ascii=False))
            i = end
        else:
            out.append(char)
            i += 1
    return "".join(out)


def _uses_language(body: str) -> bool:
    words = body.replace("(", " ").replace(")", " ").split()
    return any(word in _LANGUAGE_WORDS for word in words) or '"' in body


def parse_condition(body: str, column: int) -> ast.Condition:
    """A filter body as a condition over `@`; errors carry the column in the path."""
    text = _double_quoted(body)
    try:
        tree = condition_parser().parse(text)
        condition: ast.Condition = AstBuilder("<filter>").transform(tree)
    except UnexpectedCharacters as exc:
        raise _unexpected_character(text, exc.pos_in_stream or 0, column) from None
    except UnexpectedInput as exc:
        offset = max(0, (getattr(exc, "column", 1) or 1) - 1)
        token = getattr(exc, "token", None)
        found = f"`{token}`" if token is not None and str(token) else "end of the filter"
        raise PathSyntaxError(
            f"unexpected {found} in a filter", column=column + offset, help=_FILTER_HELP
        ) from None
    except VisitError as wrapped:
        cause = wrapped.orig_exc
        message = cause.message if isinstance(cause, AstBuildError) else "invalid filter"
        raise PathSyntaxError(message, column=column, help=_FILTER_HELP) from None
    _check_element_only(condition, column)
    return condition


def _unexpected_character(text: str, at: int, column: int) -> PathSyntaxError:
    char = text[at] if at < len(text) else ""
    words = text[:at].split()
    help = _FILTER_HELP
    if words and words[-1] in ("like", "contains", "starts_with", "ends_with"):
        glob = text[at:].split(")")[0].split()[0] if text[at:].strip() else char
        help = f'globs and strings are quoted: `{words[-1]} "{glob}"`'
    return PathSyntaxError(f"unexpected `{char}` in a filter", column=column + at, help=help)


_FILTER_HELP = (
    'a filter tests each element `@`, e.g. `[?(@.name like "*_admin")]`, '
    '`[?(@.text matches /secret/i)]` or `[?(starts_with(@.uri, "file:") and not @.trusted)]`'
)


def _check_element_only(condition: ast.Condition, column: int) -> None:
    for node in iter_nodes(condition):
        what: str | None = None
        if isinstance(node, ast.PathRef) and not node.relative:
            what = f"`{node.source}`"
        elif isinstance(node, ast.ParamRef):
            what = f"`param.{node.name}`"
        elif isinstance(node, ast.ContextRef):
            what = "`context." + ".".join(node.parts) + "`"
        elif isinstance(node, ast.EventRef | ast.PhaseRef):
            what = "`event`" if isinstance(node, ast.EventRef) else "`phase`"
        if what is not None:
            raise PathSyntaxError(
                f"{what} cannot be read inside a filter",
                column=column,
                help=_ELEMENT_ONLY_HELP.format(what=what),
            )


def element_path(source: str) -> str:
    """``@.name`` as the absolute path it is relative to the element: ``$.name``."""
    return "$" + source[1:]


ParsePath = Callable[[str], PathSyntax]


def _simple(condition: ast.Condition, parse_path: ParsePath) -> Filter | None:
    """`@.x OP literal` and `exists @.x` keep the plain step form the schema checker reads."""
    if isinstance(condition, ast.Exists) and not condition.negated:
        return Filter(parse_path(element_path(condition.path.source)).steps, "exists")
    if (
        isinstance(condition, ast.Compare)
        and condition.quantifier is None
        and isinstance(condition.left, ast.PathRef)
        and isinstance(condition.right, ast.Literal_)
        and not isinstance(condition.right.value, tuple)
    ):
        target = parse_path(element_path(condition.left.source)).steps
        return Filter(target, condition.op, condition.right.value)
    return None


def _target(condition: ast.Condition, parse_path: ParsePath) -> tuple[Step, ...]:
    """The first `@` path of the condition, for the schema checker's did-you-mean."""
    for node in iter_nodes(condition):
        if isinstance(node, ast.PathRef):
            steps = parse_path(element_path(node.source)).steps
            if all(isinstance(s, Field) for s in steps):
                return steps
    return ()


def parse_with_filters(
    source: str,
    plain_error: PathSyntaxError,
    parse_plain: Callable[[str], tuple[Step, ...]],
    parse_path: ParsePath,
) -> PathSyntax:
    """Parse a path whose filters use the language's predicates, or raise the best error."""
    cut = cut_filters(source)
    if cut is None:
        raise plain_error
    rewritten, bodies = cut
    filters: list[Filter] = []
    for body, column in bodies:
        try:
            condition = parse_condition(body, column)
        except PathSyntaxError:
            if _uses_language(body):
                raise
            raise plain_error from None
        filters.append(_filter_step(condition, body, parse_path))
    steps = parse_plain(rewritten)
    return PathSyntax(source, tuple(_restore(step, filters) for step in steps))


def _filter_step(condition: ast.Condition, body: str, parse_path: ParsePath) -> Filter:
    simple = _simple(condition, parse_path)
    if simple is not None:
        return simple
    return Filter(_target(condition, parse_path), "exists", None, condition, body)


def _restore(step: Step, filters: list[Filter]) -> Any:
    if isinstance(step, Field) and len(step.names) == 1 and step.names[0].startswith(PLACEHOLDER):
        return filters[int(step.names[0].split(PLACEHOLDER)[1])]
    return step

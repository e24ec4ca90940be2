"""JSONPath as a list of steps: the form the checker and the compiler share.

jsonpath-ng parses the text once; its tree is turned into these small frozen
steps so that schema checking (language layer) and fast evaluation (compiler
layer) work on one representation of our own.
"""

from __future__ import annotations

import functools
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from . import ast
from .path_filters import element_path, parse_with_filters
from .path_steps import (
    Descend,
    Field,
    Filter,
    FilterOp,
    Index,
    PathSyntax,
    PathSyntaxError,
    Slice,
    Step,
    Wildcard,
)
from .walk import find

__all__ = [
    "Descend",
    "Field",
    "Filter",
    "FilterOp",
    "Index",
    "PathSyntax",
    "PathSyntaxError",
    "Slice",
    "Step",
    "Wildcard",
    "filter_conditions",
    "format_location",
    "parse_path",
]

_SUPPORTED = (
    "paths may use names (`.name`, `['name']`, `['a','b']`), `*`, indexes (`[0]`, `[-1]`, "
    "`[0,2]`), slices (`[1:3]`), `..` and filters such as `[?(@.type == 'text')]`"
)
_FILTER_HELP = (
    "a filter tests each element `@` with the language's predicates, e.g. "
    '`[?(@.name like "*_admin")]`, `[?(@.text matches /secret/i)]` or '
    '`[?(starts_with(@.uri, "file:") and not @.trusted == true)]`'
)
_COMPARISONS: frozenset[str] = frozenset({"==", "!=", "<", "<=", ">", ">="})


def _unsupported(construct: str, column: int | None, help: str | None = None) -> PathSyntaxError:
    return PathSyntaxError(
        f"unsupported JSONPath construct `{construct}`", column=column, help=help or _SUPPORTED
    )


# --------------------------------------------------------------------------- tokens


@dataclass(frozen=True)
class _Token:
    """Our typed view of one jsonpath-ng token, with the facts the checks need."""

    kind: str
    value: object
    column: int
    quoted: bool
    in_filter: bool


def _lex(source: str) -> tuple[list[Any], list[_Token]]:
    """Tokenize with jsonpath-ng's own lexer: the raw tokens feed its parser unchanged.

    Lexing up front (instead of letting the parser pull tokens) is what lets us
    refuse constructs that would make jsonpath-ng emit DeprecationWarnings, and
    point at the exact column of any construct we refuse.
    """
    from jsonpath_ng.exceptions import JsonPathLexerError
    from jsonpath_ng.ext.parser import ExtendedJsonPathLexer

    try:
        raw: list[Any] = list(ExtendedJsonPathLexer().tokenize(source))
    except JsonPathLexerError as exc:
        raise _lexer_error(source, str(exc)) from None
    kinds = [str(t.type) for t in raw]
    in_filter = _filter_membership(kinds)
    starts = _quote_starts(source)
    tokens = [
        _Token(
            kind,
            t.value,
            starts.get(int(t.lexpos), int(t.lexpos)),
            bool(getattr(t, "quoted", False)),
            inside,
        )
        for kind, t, inside in zip(kinds, raw, in_filter, strict=True)
    ]
    return raw, tokens


def _quote_starts(source: str) -> dict[int, int]:
    """Map each closing quote's column to its opening quote's column.

    ply stamps a quoted name (or a backquoted operator) with the position of its
    closing quote; messages should point at where the name starts.
    """
    starts: dict[int, int] = {}
    opened: int | None = None
    quote = ""
    escaped = False
    for column, char in enumerate(source):
        if opened is None:
            if char in "'\"`":
                opened, quote = column, char
        elif escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == quote:
            starts[column] = opened
            opened = None
    return starts


def _filter_membership(kinds: list[str]) -> list[bool]:
    """For each token, whether it sits inside a ``[?...]`` filter bracket."""
    stack: list[bool] = []
    result: list[bool] = []
    for position, kind in enumerate(kinds):
        if kind == "[":
            result.append(any(stack))
            is_filter = position + 1 < len(kinds) and kinds[position + 1] == "?"
            stack.append(is_filter)
        elif kind == "]":
            if stack:
                stack.pop()
            result.append(any(stack))
        else:
            result.append(any(stack))
    return result


_UNEXPECTED_CHARACTER_HELP = {
    "^": "parent selectors are not supported; select the parent's path directly",
    "\\": "backslashes are only valid inside quoted names: $['a\\'b']",
}


def _lexer_error(source: str, detail: str) -> PathSyntaxError:
    if "Unexpected EOF" in detail:
        return PathSyntaxError(
            "unterminated quoted name or string",
            column=_open_quote_column(source),
            help="close the quote: $['name']",
        )
    match = re.search(r"col (\d+)", detail)
    column = int(match.group(1)) if match else None
    char = source[column] if column is not None and column < len(source) else "?"
    return PathSyntaxError(
        f"unexpected character `{char}` in path",
        column=column,
        help=_UNEXPECTED_CHARACTER_HELP.get(char, _SUPPORTED),
    )


def _open_quote_column(source: str) -> int | None:
    """Column of the quote that is never closed (jsonpath-ng only says "EOF")."""
    closed = _quote_starts(source)
    opening = [i for i, char in enumerate(source) if char in "'\"`"]
    unmatched = [i for i in opening if i not in closed and i not in closed.values()]
    return unmatched[0] if unmatched else None


# Tokens that can only mean a construct we do not support, whatever surrounds them.
_UNSUPPORTED_TOKENS: dict[str, tuple[str, str]] = {
    "WHERE": ("where", "filter with `[?(@.name == 'value')]` instead"),
    "WHERENOT": ("wherenot", "filter with `[?(@.name != 'value')]` instead"),
    "|": ("|", "write one rule per path, or list names in brackets: $['a','b']"),
    "&": ("&", "write one rule per condition"),
    "AND": ("&&", "write one rule per condition"),
    "OR": ("||", "write one rule per condition"),
    "!": ("!", "test for a missing member with a separate rule, or compare with `!=`"),
    "+": ("+", "arithmetic is not supported in paths"),
    "-": ("-", "arithmetic is not supported in paths"),
}


# Inside a filter the language's own words do these jobs.
_IN_FILTER_HELP = {
    "&": "combine tests in a filter with `and`: [?(@.a == 1 and @.b)]",
    "AND": "combine tests in a filter with `and`: [?(@.a == 1 and @.b)]",
    "OR": "combine tests in a filter with `or`: [?(@.a == 1 or @.b)]",
    "!": "negate a test in a filter with `not`: [?(not @.hidden)]",
}


def _check_tokens(source: str, tokens: list[_Token]) -> None:
    """Refuse, with an exact column, what jsonpath-ng would accept but we do not."""
    if not tokens:
        raise PathSyntaxError("empty path", column=0, help="write `$` for the whole message")
    slice_colons: list[int] = []
    for position, token in enumerate(tokens):
        previous = tokens[position - 1] if position else None
        _check_token(token, previous)
        _check_slice_step(token, slice_colons)
    if tokens[0].kind != "$":
        raise _not_rooted(source, tokens[0])


def _check_token(token: _Token, previous: _Token | None) -> None:
    kind = token.kind
    if kind == "NAMED_OPERATOR":
        raise _unsupported(
            str(token.value), token.column, "backquoted operators such as `len` are not supported"
        )
    if kind == "SORT_DIRECTION":  # jsonpath-ng lexes every slash and backslash this way
        if previous is not None and previous.kind == "[":
            raise _unsupported("[/...] sorting", token.column, "sorting is not supported in paths")
        if token.value == "\\":
            raise PathSyntaxError(
                "unexpected character `\\` in path",
                column=token.column,
                help=_UNEXPECTED_CHARACTER_HELP["\\"],
            )
        raise _unsupported("/", token.column, "arithmetic is not supported in paths")
    if kind in _UNSUPPORTED_TOKENS:
        construct, help = _UNSUPPORTED_TOKENS[kind]
        help = _IN_FILTER_HELP.get(kind, help) if token.in_filter else help
        if kind == "WHERE" or kind == "WHERENOT":
            help += f"; to select a member named `{construct}`, quote it: $['{construct}']"
        raise _unsupported(construct, token.column, help)
    if kind == "FILTER_OP" and token.value not in _COMPARISONS:
        raise _bad_operator(str(token.value), token.column)
    if kind == "ID" and not token.quoted and previous is not None and previous.kind == "FILTER_OP":
        raise PathSyntaxError(
            f"unquoted word `{token.value}` in a filter",
            column=token.column,
            help=f"quote strings: '{token.value}'",
        )


def _bad_operator(operator: str, column: int) -> PathSyntaxError:
    if operator == "=~":
        return _unsupported(
            "=~", column, "test a regex in a filter with `matches`: [?(@.name matches /re/)]"
        )
    if operator == "=":
        return PathSyntaxError("`=` is not a comparison", column=column, help="use `==`")
    return _unsupported(operator, column)


def _check_slice_step(token: _Token, colons: list[int]) -> None:
    """Refuse ``[a:b:0]``: jsonpath-ng silently selects nothing, which hides a typo."""
    if token.kind == "[":
        colons.append(0)
    elif token.kind == "]" and colons:
        colons.pop()
    elif token.kind == ":" and colons:
        colons[-1] += 1
    elif token.kind == "NUMBER" and token.value == 0 and colons and colons[-1] == 2:
        raise PathSyntaxError(
            "slice step cannot be 0", column=token.column, help="omit the step or use 1"
        )


def _not_rooted(source: str, first: _Token) -> PathSyntaxError:
    text = source.strip()
    if first.kind == "@":
        help = "`@` is the current item inside a filter; start the path with `$`"
    elif first.kind == "ID" and not first.quoted:
        help = f"write `$.{text}`"
    elif first.kind in ("[", ".", "DOUBLEDOT"):
        help = f"write `${text}`"
    else:
        help = "start the path with `$`, as in `$.arguments.query`"
    return PathSyntaxError("paths must start with `$`", column=first.column, help=help)


# --------------------------------------------------------------------------- parsing


_PARSER_LOCK = threading.Lock()


@functools.lru_cache(maxsize=1)
def _parser() -> Any:
    """One jsonpath-ng ext parser, built once: building loads ply's tables (~0.4 ms)."""
    from jsonpath_ng.ext.parser import ExtendedJsonPathParser

    return ExtendedJsonPathParser()


def _parse_tokens(source: str, raw: list[Any], tokens: list[_Token]) -> Any:
    """Run jsonpath-ng's ext grammar over the tokens; its errors become ours.

    ply's parser keeps state on the instance, hence the lock.
    """
    from jsonpath_ng.exceptions import JSONPathError

    fed = [-1]

    def feed() -> Iterator[Any]:
        for position, token in enumerate(raw):
            fed[0] = position
            yield token

    try:
        with _PARSER_LOCK:
            return _parser().parse_token_stream(feed())
    except JSONPathError as exc:
        at_end = "end of string" in str(exc) or fed[0] < 0
        raise _parse_error(source, tokens, None if at_end else fed[0]) from None
    except Exception as exc:  # a grammar action failed in a way jsonpath-ng does not name
        raise PathSyntaxError("invalid path", help=_SUPPORTED) from exc


def _parse_error(source: str, tokens: list[_Token], position: int | None) -> PathSyntaxError:
    if position is None:
        last = tokens[-1].kind
        help = "add a name or `*` after the dot" if last in (".", "DOUBLEDOT") else _SUPPORTED
        if last != "]" and any(t.kind == "[" for t in tokens):
            help = "close the bracket with `]`"
        return PathSyntaxError("path ends unexpectedly", column=len(source), help=help)
    token = tokens[position]
    end = tokens[position + 1].column if position + 1 < len(tokens) else len(source)
    text = source[token.column : end].strip() or str(token.value)
    previous = tokens[position - 1].kind if position else ""
    help = _SUPPORTED
    if token.kind == "ID" and not token.quoted and previous in ("$", "ID", "]"):
        help = f"separate names with a dot: .{text}"
    return PathSyntaxError(f"unexpected `{text}` in path", column=token.column, help=help)


# --------------------------------------------------------------------------- tree -> steps


_DESCEND_MARK = object()


def _flatten(tree: Any) -> list[Any]:
    """Left-to-right leaves of jsonpath-ng's Child/Descendants tree, ``..`` as a marker.

    ``$.a..b.c`` parses as ``Descendants(Child($, a), Child(b, c))``; reading the
    leaves in order gives exactly our step list.  An explicit stack keeps a very
    long path from hitting Python's recursion limit.
    """
    from jsonpath_ng.jsonpath import Child, Descendants

    leaves: list[Any] = []
    stack: list[Any] = [tree]
    while stack:
        node = stack.pop()
        if type(node) is Child:
            stack.extend((node.right, node.left))
        elif type(node) is Descendants:
            stack.extend((node.right, _DESCEND_MARK, node.left))
        else:
            leaves.append(node)
    return leaves


class _Converter:
    """Turns jsonpath-ng's untyped tree into our steps; all its node types stay in here."""

    def __init__(self, tokens: list[_Token]) -> None:
        from jsonpath_ng import jsonpath as jp
        from jsonpath_ng.ext import filter as jf
        from jsonpath_ng.ext.arithmetic import Operation

        self._jp = jp
        self._jf = jf
        self._operation = Operation
        self._tokens = tokens

    def path(self, tree: Any) -> tuple[Step, ...]:
        leaves = _flatten(tree)
        if type(leaves[0]) is not self._jp.Root:
            # The text starts with `$`, so something wraps the whole path (arithmetic).
            raise self._misplaced(leaves[0])
        steps: list[Step] = []
        for position, leaf in enumerate(leaves[1:], start=1):
            if leaf is _DESCEND_MARK:
                following = leaves[position + 1] if position + 1 < len(leaves) else None
                if following is None or following is _DESCEND_MARK:
                    raise PathSyntaxError(
                        "`..` must be followed by a name, `*`, an index or a filter",
                        column=self._column("DOUBLEDOT"),
                    )
                steps.append(Descend())
            else:
                steps.append(self._step(leaf))
        return tuple(steps)

    def _step(self, node: Any) -> Step:
        jp = self._jp
        kind = type(node)
        if kind is jp.Fields:
            return Field(tuple(str(name) for name in node.fields))
        if kind is jp.Wildcard:
            return Wildcard()
        if kind is jp.Index:
            return Index(tuple(int(i) for i in node.indices))
        if kind is jp.Slice:
            return Slice(node.start, node.end, node.step)
        if kind is self._jf.Filter:
            return self._filter(node)
        raise self._misplaced(node)

    def _misplaced(self, node: Any) -> PathSyntaxError:
        jp = self._jp
        if type(node) is jp.Root:
            return PathSyntaxError(
                "`$` may only start a path",
                column=self._column("$", nth=1),
                help="remove the inner `$`",
            )
        if type(node) is jp.This:
            return _unsupported(
                "@",
                self._column("@", in_filter=False),
                "`@` is the current item and is only valid inside a filter `[?(...)]`",
            )
        if type(node) is self._operation:
            return _unsupported(
                "*", self._operator_column(), "arithmetic is not supported in paths"
            )
        return _unsupported(_describe(node), None)

    def _filter(self, node: Any) -> Filter:
        jf = self._jf
        expressions = list(node.expressions)
        if len(expressions) != 1 or type(expressions[0]) is not jf.Expression:
            raise _unsupported("&&", self._column("AND"), "combine tests in a filter with `and`")
        expression = expressions[0]
        target = self._filter_target(expression.target)
        if expression.op is None:
            return Filter(target, "exists")
        value = expression.value
        if isinstance(value, self._jp.JSONPath):
            raise _unsupported(
                "comparison with a path",
                self._column("FILTER_OP"),
                "compare the member with a literal: [?(@.name == 'value')]",
            )
        if expression.op not in _COMPARISONS:
            raise _bad_operator(str(expression.op), self._column("FILTER_OP") or 0)
        return Filter(target, expression.op, value)

    def _filter_target(self, target: Any) -> tuple[Step, ...]:
        leaves = _flatten(target)
        if type(leaves[0]) is not self._jp.This:
            raise PathSyntaxError(
                "a filter test must start with `@` (the item being tested)",
                column=self._column("[", in_filter=False),
                help="write [?(@.name == 'value')]",
            )
        steps: list[Step] = []
        for leaf in leaves[1:]:
            step = None if leaf is _DESCEND_MARK else self._step(leaf)
            if not (
                (isinstance(step, Field) and len(step.names) == 1)
                or (isinstance(step, Index) and len(step.indexes) == 1)
            ):
                raise _unsupported(
                    "non-singular filter test",
                    self._column("?"),
                    "a filter may only test `@`, `@.name`, `@['name']` or `@[0]` paths",
                )
            steps.append(step)
        return tuple(steps)

    def _operator_column(self) -> int | None:
        """Column of a ``*`` used as multiplication (not as a wildcard after `.`/`[`/`..`)."""
        for previous, token in zip(self._tokens, self._tokens[1:], strict=False):
            if token.kind == "*" and previous.kind not in (".", "[", "DOUBLEDOT"):
                return token.column
        return None

    def _column(self, kind: str, *, nth: int = 0, in_filter: bool | None = None) -> int | None:
        """Column of the ``nth`` token of ``kind`` (best effort for tree-level errors)."""
        seen = 0
        for token in self._tokens:
            if token.kind != kind or (in_filter is not None and token.in_filter != in_filter):
                continue
            if seen == nth:
                return token.column
            seen += 1
        return None


def _describe(node: Any) -> str:
    try:
        return str(node)
    except Exception:
        return type(node).__name__


# --------------------------------------------------------------------------- entry points


@functools.lru_cache(maxsize=4096)
def parse_path(source: str) -> PathSyntax:
    """Parse a JSONPath once with jsonpath-ng's ext grammar and convert it to our steps.

    Results are cached by text (a PathSyntax is immutable): policy sets repeat
    the same few paths across rules and files, and jsonpath-ng's lexer is the
    slowest part of checking them. Errors are not cached; they are rare.

    jsonpath-ng does the parsing (so paths mean what its users expect); we then
    keep only our own step list, so evaluation never touches jsonpath-ng again.
    Everything outside the supported subset raises :class:`PathSyntaxError`.
    """
    bad = next((i for i, char in enumerate(source) if ord(char) < 32 or char == "\x7f"), None)
    if bad is not None:
        raise PathSyntaxError(
            "control characters (such as line breaks) are not allowed in a path",
            column=bad,
            help="write the path on one line",
        )
    try:
        raw, tokens = _lex(source)
        _check_tokens(source, tokens)
        tree = _parse_tokens(source, raw, tokens)
        return PathSyntax(source, _Converter(tokens).path(tree))
    except PathSyntaxError as plain_error:
        # Not plain JSONPath: perhaps filters written with the language's predicates.
        return parse_with_filters(source, plain_error, _parse_plain, parse_path)


def _parse_plain(source: str) -> tuple[Step, ...]:
    raw, tokens = _lex(source)
    _check_tokens(source, tokens)
    return _Converter(tokens).path(_parse_tokens(source, raw, tokens))


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# Words jsonpath-ng reads as keywords after a dot, so they must be bracketed.
_KEYWORDS = frozenset({"where", "wherenot"})


def format_location(location: tuple[str | int, ...]) -> str:
    """A concrete location as a short, unambiguous path for messages.

    ``("content", 0, "text")`` -> ``content[0].text``; the root is ``$``.  Names
    that are not plain identifiers are bracketed and quoted so that
    ``"$." + result`` (or ``"$" + result`` when it starts with ``[``) parses back
    to the same location.
    """
    if not location:
        return "$"
    parts: list[str] = []
    for key in location:
        if isinstance(key, int):
            parts.append(f"[{key}]")
        elif _IDENTIFIER.match(key) and key not in _KEYWORDS:
            parts.append(f".{key}" if parts else key)
        else:
            parts.append(f"[{_quote(key)}]")
    return "".join(parts)


def _quote(name: str) -> str:
    escaped = name.replace("\\", "\\\\").replace("'", "\\'")
    return f"'{escaped}'"


def filter_conditions(node: Any) -> Iterator[tuple[ast.PathRef, ast.Condition]]:
    """Each filter condition written inside a path below ``node``, with its path.

    Plain comparison filters are given as the `Compare` they mean, so the type
    checker treats `[?(@.name < 'm')]` and `@.name < "m"` alike. Paths that do
    not parse are skipped (the path checker reports them).
    """
    for ref in find(node, ast.PathRef):
        source = element_path(ref.source) if ref.relative else ref.source
        try:
            steps = parse_path(source).steps
        except PathSyntaxError:
            continue
        for step in steps:
            if not isinstance(step, Filter):
                continue
            if step.condition is not None:
                yield ref, step.condition
                yield from filter_conditions(step.condition)
            elif step.op != "exists":
                left = ast.PathRef(_render_target(step.target), span=ref.span)
                right = ast.Literal_(step.value, span=ref.span)
                yield ref, ast.Compare(step.op, left, right, span=ref.span)


def _render_target(target: tuple[Step, ...]) -> str:
    parts = ["@"]
    for step in target:
        if isinstance(step, Field):
            parts.append("[" + json.dumps(step.names[0]) + "]")
        elif isinstance(step, Index):
            parts.append(f"[{step.indexes[0]}]")
    return "".join(parts)

"""Finding what sits under the cursor: in the AST when the file parses, in the text when not.

Positions here are 1-based lines and columns counted in characters, like every
``Span``; the LSP adapter converts to and from the editor's units.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..language import ast
from ..language.diagnostics import Span
from ..language.walk import iter_nodes

_BLOCK_HEADER = re.compile(r"^\s*(validator|mutator|test|pattern)\b")
_HOOK = re.compile(r"\bon\s+([^\s,{}]+(?:\s*,\s*[^\s,{}]+)*)\s+(request|response|both)\b")
_PARAM = re.compile(r"\bparam\s+([A-Za-z_][A-Za-z0-9_]*)\s*:\s*([^=\n]+?)\s*(?:=|$|\n)")


@dataclass(frozen=True)
class Position:
    line: int
    column: int


def contains(span: Span, at: Position) -> bool:
    start = (span.line, span.column)
    end = (span.end_line, span.end_column)
    return start <= (at.line, at.column) < end or (at.line, at.column) == end


def item_at(file: ast.PolicyFile, at: Position) -> ast.Item | None:
    for item in file.items:
        if contains(item.span, at):
            return item
    return None


def node_at(file: ast.PolicyFile, at: Position) -> tuple[ast.Item | None, Any]:
    """The top-level item and the innermost node with a span holding the position."""
    item = item_at(file, at)
    if item is None:
        return None, None
    best: Any = item
    for node in iter_nodes(item):
        span = getattr(node, "span", None)
        if (
            isinstance(span, Span)
            and span.file == item.span.file
            and contains(span, at)
            and _size(span) <= _size(best.span)
        ):
            best = node
    return item, best


def _size(span: Span) -> tuple[int, int]:
    return (span.end_line - span.line, span.end_column - span.column)


def pairs(hooks: Sequence[tuple[tuple[str, ...], str]]) -> list[tuple[str, str]]:
    """(event, phase) pairs, ``both`` split in two."""
    out: list[tuple[str, str]] = []
    for events, phase in hooks:
        for event in events:
            for one in ("request", "response") if phase == "both" else (phase,):
                if (event, one) not in out:
                    out.append((event, one))
    return out


def hooks_of(item: ast.Interceptor) -> list[tuple[str, str]]:
    found = [
        (tuple(e.name for e in s.events), s.phases)
        for s in item.statements
        if isinstance(s, ast.Hook)
    ]
    return pairs(found)


@dataclass(frozen=True)
class TextBlock:
    """The block around a line, read from text alone (the file may not parse)."""

    kind: str | None
    hooks: list[tuple[str, str]]
    params: dict[str, str]


def block_text(text: str, line: int) -> TextBlock:
    lines = text.split("\n")
    index = min(max(line - 1, 0), max(len(lines) - 1, 0))
    start = index
    while start > 0 and not _BLOCK_HEADER.match(lines[start]):
        start -= 1
    end = index + 1
    while end < len(lines) and not _BLOCK_HEADER.match(lines[end]):
        end += 1
    header = _BLOCK_HEADER.match(lines[start]) if lines else None
    body = "\n".join(lines[start:end])
    found = [
        (tuple(e.strip() for e in m.group(1).split(",")), m.group(2)) for m in _HOOK.finditer(body)
    ]
    params = {m.group(1): m.group(2).strip() for m in _PARAM.finditer(body)}
    return TextBlock(header.group(1) if header else None, pairs(found), params)


def word_at(line_text: str, column: int, extra: str = "") -> tuple[str, int, int]:
    """The word (letters, digits, ``_`` and ``extra``) around a 1-based column: text, start, end."""
    allowed = set(extra)

    def inside(ch: str) -> bool:
        return ch.isalnum() or ch == "_" or ch in allowed

    start = end = column - 1
    while start > 0 and inside(line_text[start - 1]):
        start -= 1
    while end < len(line_text) and inside(line_text[end]):
        end += 1
    return line_text[start:end], start + 1, end + 1


def interceptors(file: ast.PolicyFile) -> Iterator[ast.Interceptor]:
    for item in file.items:
        if isinstance(item, ast.Interceptor):
            yield item

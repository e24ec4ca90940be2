"""Completion candidates from the text before the cursor.

Read from text, not the AST, because the line being typed rarely parses.
Keywords come from the grammar's own literals, fields from the payload
schemas of the block's hooks, names from the checked policy set.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Literal

from ..language.builtin_patterns import BUILTIN_PATTERNS
from ..language.grammar import parser
from ..language.model import PolicySetModel
from ..language.path_syntax import PathSyntaxError, parse_path
from ..language.payload_schema import fields_under, known_schema
from ..wire.events import STANDARD_EVENTS
from .locate import block_text

Kind = Literal["keyword", "event", "pattern", "param", "field", "interceptor"]

_PATH = re.compile(r"\$[^\s\"]*$")
_PARAM = re.compile(r"\bparam\.[A-Za-z0-9_]*$")
_EVENTS = re.compile(r"\b(?:on\s+(?:[^\s,]+\s*,\s*)*|given\s+)[^\s,]*$")
_INTERCEPTORS = re.compile(r"\b(?:config\s+|only\s+(?:[^\s,]+\s*,\s*)*)[^\s,]*$")
_PATTERNS = re.compile(r"\b(?:matching|matches)\s+(?:[A-Za-z0-9_]+\s*,\s*)*[A-Za-z0-9_]*$")
_USER_PATTERN = re.compile(r"^\s*pattern\s+([A-Za-z_][A-Za-z0-9_]*)", re.MULTILINE)


@dataclass(frozen=True)
class Candidate:
    label: str
    kind: Kind
    detail: str | None = None
    documentation: str | None = None


@cache
def keywords() -> tuple[str, ...]:
    """Every word literal of the grammar, so new statements complete without a list here."""
    words = {
        t.pattern.value
        for t in parser().terminals
        if t.pattern.type == "str" and t.pattern.value.isalpha() and len(t.pattern.value) > 1
    }
    return tuple(sorted(words))


def complete(text: str, line: int, column: int, model: PolicySetModel | None) -> list[Candidate]:
    lines = text.split("\n")
    current = lines[line - 1] if 0 < line <= len(lines) else ""
    before = current[: column - 1]
    block = block_text(text, line)
    path = _PATH.search(before)
    if path:
        return _fields(path.group(0), block.hooks)
    if _PARAM.search(before):
        return [Candidate(name, "param", type_) for name, type_ in sorted(block.params.items())]
    if _PATTERNS.search(before):
        return _patterns(text, model)
    if _EVENTS.search(before):
        return [Candidate(e, "event", "MCP event") for e in STANDARD_EVENTS]
    if _INTERCEPTORS.search(before) and block.kind == "test" and model is not None:
        return [
            Candidate(i.name, "interceptor", i.node.kind, i.node.description)
            for i in sorted(model.interceptors, key=lambda i: i.name)
        ]
    return [Candidate(word, "keyword") for word in keywords()]


def _fields(typed: str, hooks: list[tuple[str, str]]) -> list[Candidate]:
    parent = typed.rsplit(".", 1)[0] if "." in typed else "$"
    parent = parent.rstrip(".") or "$"
    try:
        path = parse_path(parent)
    except PathSyntaxError:
        return []
    found: dict[str, Candidate] = {}
    for event, phase in hooks:
        if not known_schema(event, phase):
            continue
        for doc in fields_under(event, phase, path):
            found.setdefault(doc.name, Candidate(doc.name, "field", doc.type, doc.description))
    return [found[name] for name in sorted(found)]


def _patterns(text: str, model: PolicySetModel | None) -> list[Candidate]:
    found: dict[str, Candidate] = {}
    for name, builtin in BUILTIN_PATTERNS.items():
        found[name] = Candidate(name, "pattern", "built-in pattern", builtin.description)
    if model is not None:
        for name, pattern in model.patterns.items():
            if not pattern.builtin:
                found[name] = Candidate(name, "pattern", f"/{pattern.source}/{pattern.flags}")
    for match in _USER_PATTERN.finditer(text):
        found.setdefault(match.group(1), Candidate(match.group(1), "pattern", "pattern"))
    return [found[name] for name in sorted(found)]

"""Hover text (Markdown) for what the cursor is on: patterns, paths, events, params."""

from __future__ import annotations

import inspect
from typing import Any

from ..compiler.candidate_checks import CANDIDATE_CHECKS
from ..language import ast
from ..language.builtin_patterns import BUILTIN_PATTERNS
from ..language.model import NO_DEFAULT, PolicySetModel
from ..language.path_syntax import PathSyntaxError, parse_path
from ..language.payload_schema import FieldDoc, describe_path, known_schema, payload_shape
from .locate import Position, hooks_of, node_at, word_at

_MAX_SHAPE_FIELDS = 20


def hover_text(
    model: PolicySetModel | None, file: ast.PolicyFile, at: Position, text_line: str = ""
) -> str | None:
    item, node = node_at(file, at)
    if node is None:
        return None
    if isinstance(node, ast.PatternName):
        return _pattern(model, node.name)
    if isinstance(node, ast.PatternDef):
        return _pattern(model, node.name)
    if isinstance(node, ast.PathRef) and isinstance(item, ast.Interceptor):
        return _path(item, node, at)
    if isinstance(node, ast.EventName):
        return event_text(node.name)
    if isinstance(node, ast.ParamRef) and isinstance(item, ast.Interceptor) and model:
        return _param(model, item, node.name)
    if isinstance(node, ast.Given) and node.span.line == at.line:
        return _given_event(node, at, text_line)
    return None


def _given_event(node: ast.Given, at: Position, line: str) -> str | None:
    """``given EVENT phase {...}`` keeps the event as text; hover it when the cursor is on it."""
    word, _, _ = word_at(line, at.column, extra="/*")
    return event_text(node.event) if word == node.event else None


def _pattern(model: PolicySetModel | None, name: str) -> str | None:
    resolved = model.patterns.get(name) if model else None
    builtin = BUILTIN_PATTERNS.get(name)
    if resolved is not None and not resolved.builtin:
        flags = resolved.flags
        where = f"\n\ndefined at {resolved.span}" if resolved.span else ""
        return f"**pattern `{name}`**\n\n```\n/{resolved.source}/{flags}\n```{where}"
    if builtin is None:
        return None
    lines = [f"**built-in pattern `{name}`**", "", builtin.description, "", "```", builtin.source]
    lines.append("```")
    if builtin.check:
        check = CANDIDATE_CHECKS.get(builtin.check)
        doc = inspect.getdoc(check) if check else None
        summary = doc.split("\n\n")[0].replace("\n", " ") if doc else ""
        lines += ["", f"each match must also pass the `{builtin.check}` check: {summary}".rstrip()]
    return "\n".join(lines)


def _path(item: ast.Interceptor, node: ast.PathRef, at: Position) -> str | None:
    """Describes the path up to the segment under the cursor, on every hooked payload."""
    source = node.source
    if node.span.line == at.line:
        _, _, end = word_at(source, at.column - node.span.column + 1)
        cut = source[: end - 1]
        if cut not in ("", "$"):
            source = cut
    try:
        path = parse_path(source)
    except PathSyntaxError:
        source = node.source
        try:
            path = parse_path(source)
        except PathSyntaxError:
            return None
    described: list[tuple[str, str, FieldDoc]] = []
    for event, phase in hooks_of(item):
        if known_schema(event, phase):
            found = describe_path(event, phase, path)
            if found is not None:
                described.append((event, phase, found))
    if not described:
        return None
    parts = [f"**`{source}`**"]
    for event, phase, doc in described:
        text = f"\n`{doc.type}` in the {event} {phase} payload"
        if doc.description:
            text += f"\n\n{doc.description}"
        parts.append(text)
    return "\n".join(parts)


def event_text(event: str) -> str | None:
    if not known_schema(event, "request"):
        return None
    parts = [f"**event `{event}`**"]
    for phase, payload in (("request", "params"), ("response", "result")):
        fields = payload_shape(event, phase)
        shown = ", ".join(f"`{f.name}`: {f.type}" for f in fields[:_MAX_SHAPE_FIELDS])
        more = len(fields) - _MAX_SHAPE_FIELDS
        shown += f" and {more} more" if more > 0 else ""
        parts.append(f"\n{phase} payload (the {payload}): {{{shown}}}")
    return "\n".join(parts)


def _param(model: PolicySetModel, item: ast.Interceptor, name: str) -> str | None:
    resolved = model.interceptor(item.name)
    param = resolved.params.get(name) if resolved else None
    if param is None:
        return None
    default: Any = param.default
    shown = "required" if default is NO_DEFAULT else f"default `{default!r}`"
    where = f"set per call in the config of `{item.name}`"
    return f"**param `{name}`**: `{param.type}` ({shown})\n\n{where}"

"""Go to definition and the outline of a file."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..language import ast
from ..language.diagnostics import Span
from ..language.model import PolicySetModel
from .locate import Position, node_at

SymbolKind = Literal["validator", "mutator", "test", "pattern"]


def definition(model: PolicySetModel | None, file: ast.PolicyFile, at: Position) -> Span | None:
    """Where the pattern or param under the cursor is defined (any file of the set)."""
    if model is None:
        return None
    item, node = node_at(file, at)
    if isinstance(node, ast.PatternName):
        pattern = model.patterns.get(node.name)
        return pattern.span if pattern is not None and not pattern.builtin else None
    if isinstance(node, ast.ParamRef) and isinstance(item, ast.Interceptor):
        resolved = model.interceptor(item.name)
        param = resolved.params.get(node.name) if resolved else None
        return param.span if param is not None else None
    return None


@dataclass(frozen=True)
class Symbol:
    name: str
    kind: SymbolKind
    span: Span
    selection: Span
    detail: str | None = None


def symbols(file: ast.PolicyFile) -> list[Symbol]:
    out: list[Symbol] = []
    for item in file.items:
        if isinstance(item, ast.Interceptor):
            out.append(Symbol(item.name, item.kind, item.span, item.name_span, item.description))
        elif isinstance(item, ast.TestBlock):
            out.append(Symbol(item.name, "test", item.span, item.span))
        elif isinstance(item, ast.PatternDef):
            out.append(Symbol(item.name, "pattern", item.span, item.span))
    return out

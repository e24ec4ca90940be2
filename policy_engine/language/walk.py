"""Generic traversal of AST nodes, so each check only says what it looks for."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from functools import cache
from typing import Any, TypeVar

T = TypeVar("T")

_NOT_CHILDREN = frozenset({"span", "name_span", "comments"})


@cache
def _child_fields(kind: type) -> tuple[str, ...] | None:
    """The fields of a node type that may hold nodes, ``None`` for a type that is not a
    node (computed once per type: ``is_dataclass`` on every value cost a tenth of a
    cold ``policyc check``)."""
    if not dataclasses.is_dataclass(kind):
        return None
    return tuple(f.name for f in dataclasses.fields(kind) if f.name not in _NOT_CHILDREN)


def iter_nodes(node: Any) -> Iterator[Any]:
    """Yield ``node`` and every AST node below it, depth first, in source order."""
    stack = [node]
    while stack:
        current = stack.pop()
        kind: type = type(current)
        fields = _child_fields(kind)
        if fields is None:
            continue
        yield current
        children: list[Any] = []
        for name in fields:
            value = getattr(current, name)
            if isinstance(value, tuple):
                children.extend(value)
            elif _child_fields(value.__class__) is not None:
                children.append(value)
        stack.extend(reversed(children))


def find(node: Any, kind: type[T]) -> Iterator[T]:
    """Every node of type ``kind`` at or below ``node``."""
    for item in iter_nodes(node):
        if isinstance(item, kind):
            yield item

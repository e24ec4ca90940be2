"""Generic traversal of AST nodes, so each check only says what it looks for."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any, TypeVar

T = TypeVar("T")


def iter_nodes(node: Any) -> Iterator[Any]:
    """Yield ``node`` and every AST node below it, depth first, in source order."""
    stack = [node]
    while stack:
        current = stack.pop()
        if dataclasses.is_dataclass(current) and not isinstance(current, type):
            yield current
            children: list[Any] = []
            for f in dataclasses.fields(current):
                if f.name in ("span", "name_span", "comments"):
                    continue
                value = getattr(current, f.name)
                if isinstance(value, tuple):
                    children.extend(value)
                elif dataclasses.is_dataclass(value):
                    children.append(value)
            stack.extend(reversed(children))


def find(node: Any, kind: type[T]) -> Iterator[T]:
    """Every node of type ``kind`` at or below ``node``."""
    for item in iter_nodes(node):
        if isinstance(item, kind):
            yield item

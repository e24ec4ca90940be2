"""A JSONPath as a list of steps: the form the checker and the compiler share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True)
class Field:
    """``.name`` or ``['name']``; several names for ``['a','b']``."""

    names: tuple[str, ...]


@dataclass(frozen=True)
class Wildcard:
    """``.*`` or ``[*]``: every member of an object or element of a list."""


@dataclass(frozen=True)
class Index:
    """``[0]``, ``[-1]``, or ``[0,2]``: list elements by position."""

    indexes: tuple[int, ...]


@dataclass(frozen=True)
class Slice:
    """``[start:stop:step]`` over a list."""

    start: int | None
    stop: int | None
    step: int | None


@dataclass(frozen=True)
class Descend:
    """``..``: the current node and every node below it; the next step applies to each."""


FilterOp = Literal["==", "!=", "<", "<=", ">", ">=", "exists"]


@dataclass(frozen=True)
class Filter:
    """``[?(@.field OP literal)]``: list elements (or object members) that satisfy a test.

    ``target`` is the relative path after ``@`` (empty for ``@`` itself). A
    filter written with the language's own predicates (``like``, ``matches``,
    ``in``, ``not``, ``and``, string functions) carries that ``condition`` (an
    ``ast.Condition`` whose paths start with ``@``), with ``target``/``op``
    kept only as far as the schema checker can use them.
    """

    target: tuple[Step, ...]
    op: FilterOp
    value: Any = None
    condition: Any = field(default=None, compare=False)
    text: str = field(default="", compare=False)


Step = Field | Wildcard | Index | Slice | Descend | Filter


@dataclass(frozen=True)
class PathSyntax:
    """A parsed JSONPath: its source text and its steps after ``$``."""

    source: str
    steps: tuple[Step, ...]

    @property
    def is_singular(self) -> bool:
        """True when the path can select at most one value (only names and single indexes)."""
        return all(
            (isinstance(s, Field) and len(s.names) == 1)
            or (isinstance(s, Index) and len(s.indexes) == 1)
            for s in self.steps
        )


# --------------------------------------------------------------------------- errors


class PathSyntaxError(ValueError):
    """A path the engine cannot use: what is wrong, where, and the likely fix.

    Policy authors read these, so the message names our constructs and never
    leaks a jsonpath-ng or ply exception; ``column`` (0-based offset into the
    source, when known) lets the caller underline the exact spot.
    """

    def __init__(self, message: str, *, column: int | None = None, help: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.column = column
        self.help = help

    def __repr__(self) -> str:
        return f"PathSyntaxError({self.message!r}, column={self.column!r}, help={self.help!r})"

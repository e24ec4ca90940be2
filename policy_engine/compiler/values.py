"""JSON values as the language sees them: one home for equality and ordering.

Rule conditions and path filters both compare through `compare`, so
`[?(@.x != 1)]` and `$.x != 1` mean the same: a missing value makes every
comparison false, equality is JSON equality (`true` is not `1`, `"1"` is not
`1`), and ordering needs two numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: `true` is not `1`, and lists compare element-wise by the same rule."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return (
        bool(a == b)
        and type(a) in (int, float, str, type(None))
        and (isinstance(b, int | float) if isinstance(a, int | float) else type(a) is type(b))
    )


def compare(op: str, left: Any, right: Any) -> bool:
    """``left OP right`` for two present values."""
    if op == "==":
        return json_equal(left, right)
    if op == "!=":
        return not json_equal(left, right)
    if not (is_number(left) and is_number(right)):
        return False
    if op == "<":
        return bool(left < right)
    if op == "<=":
        return bool(left <= right)
    if op == ">":
        return bool(left > right)
    return bool(left >= right)


def literal_test(op: str, literal: Any) -> Callable[[Any], bool] | None:
    """``lambda value: compare(op, value, literal)`` in one step, for a scalar literal.

    A rule such as `event == "tools/call"` or `$.maxTokens > 4096` runs on
    every invoke: with the literal's type known when the policy compiles, the
    comparison needs no dispatch on it. None for a list or object literal
    (`compare` itself then runs).
    """
    if op in ("==", "!="):
        equal = _equal_to(literal)
        if equal is None:
            return None
        if op == "==":
            return equal
        return lambda value: not equal(value)
    if not is_number(literal):
        return lambda value: False
    number = int | float
    if op == "<":
        return lambda v: isinstance(v, number) and not isinstance(v, bool) and v < literal
    if op == "<=":
        return lambda v: isinstance(v, number) and not isinstance(v, bool) and v <= literal
    if op == ">":
        return lambda v: isinstance(v, number) and not isinstance(v, bool) and v > literal
    return lambda v: isinstance(v, number) and not isinstance(v, bool) and v >= literal


def _equal_to(literal: Any) -> Callable[[Any], bool] | None:
    """`json_equal(value, literal)` for a scalar ``literal``, else None."""
    if literal is None or isinstance(literal, bool):
        return lambda value: value is literal
    if type(literal) is str:
        return lambda value: type(value) is str and value == literal
    if type(literal) in (int, float):
        return lambda value: type(value) in (int, float) and value == literal
    return None

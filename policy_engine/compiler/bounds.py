"""Limits that keep evaluation time bounded: payload size and nesting depth.

Checked in one iterative walk (no recursion, so a hostile 100,000-level
payload cannot raise RecursionError) that stops as soon as a limit is passed.
The same walk refuses non-finite numbers (NaN, Infinity): they are not JSON,
and every comparison with NaN is false, so a `>` rule would let one through.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import isfinite
from typing import Any

from ..language.limits import SourceLimits
from ..language.path_syntax import format_location
from ..wire.errors import InterceptorError, invalid_params

DEFAULT_MAX_BYTES = 4 * 1024 * 1024
DEFAULT_MAX_DEPTH = 64


@dataclass(frozen=True)
class Limits:
    max_bytes: int = DEFAULT_MAX_BYTES
    max_depth: int = DEFAULT_MAX_DEPTH
    # What checking the policy files may cost (language/limits.py).
    source: SourceLimits = field(default_factory=SourceLimits)
    # Not a bound, but set where the bounds are: results name policy files by
    # their absolute path instead of relative to the policy root.
    absolute_paths: bool = False


def payload_too_large(interceptor: str, limits: Limits) -> InterceptorError:
    return invalid_params(
        f"payload is larger than the limit of {limits.max_bytes} bytes",
        interceptor=interceptor,
        limit="maxPayloadBytes",
        maxBytes=limits.max_bytes,
    )


def payload_too_deep(interceptor: str, limits: Limits) -> InterceptorError:
    return invalid_params(
        f"payload nests deeper than the limit of {limits.max_depth} levels",
        interceptor=interceptor,
        limit="maxPayloadDepth",
        maxDepth=limits.max_depth,
    )


def check_bounds(payload: Any, limits: Limits, interceptor: str) -> int:
    """The payload's estimated size in bytes; -32602 when it is too big or too deep.

    Sizes are estimated from the JSON text they would take (strings by length,
    other scalars small). A container's plain children are counted where it
    is visited (only containers go on the stack): this walk runs on every
    message, and most values are strings.
    """
    budget = limits.max_bytes
    max_depth = limits.max_depth
    stack: list[tuple[Any, int]] = [(payload, 1)]
    pop = stack.pop
    push = stack.append
    # Locals, not builtins: this loop runs once per value of every message.
    str_, dict_, list_, int_, bool_, float_ = str, dict, list, int, bool, float
    while stack:
        value, depth = pop()
        kind = type(value)
        if kind is dict_ or kind is list_ or isinstance(value, dict | list):
            if depth > max_depth:
                raise payload_too_deep(interceptor, limits)
            if isinstance(value, dict):
                budget -= 2 + 4 * len(value) + sum(map(len, value))
                items: Any = value.values()
            else:
                budget -= 2 + len(value)
                items = value
            below = depth + 1
            for item in items:
                kind = type(item)
                if kind is str_:
                    budget -= len(item) + 2
                elif kind is dict_ or kind is list_:
                    push((item, below))
                elif kind is int_ or kind is bool_ or item is None:
                    budget -= 5
                elif kind is float_:
                    budget -= 5
                    if not isfinite(item):
                        raise non_finite(interceptor, "payload", payload)
                else:
                    push((item, below))
        elif isinstance(value, str):
            budget -= len(value) + 2
        else:
            budget -= 5
            if isinstance(value, float) and not isfinite(value):
                raise non_finite(interceptor, "payload", payload)
        if budget < 0:
            raise payload_too_large(interceptor, limits)
    return limits.max_bytes - budget


def find_non_finite(value: Any) -> tuple[str | int, ...] | None:
    """Where the first NaN or +-Infinity sits in ``value``, if one does (iterative)."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        item, location = stack.pop()
        if isinstance(item, dict):
            stack.extend((v, (*location, k)) for k, v in reversed(item.items()))
        elif isinstance(item, list | tuple):
            stack.extend((v, (*location, i)) for i, v in reversed(list(enumerate(item))))
        elif isinstance(item, float) and not isfinite(item):
            return location
    return None


def non_finite(interceptor: str, what: str, value: Any) -> InterceptorError:
    """-32602 naming where the non-finite number is (its path, never its neighbours)."""
    location = find_non_finite(value) or ()
    relative = format_location(location)
    path = (
        relative
        if relative.startswith("$")
        else f"${'' if relative.startswith('[') else '.'}{relative}"
    )
    return invalid_params(
        f"{what} holds a non-finite number (NaN or Infinity) at `{path}`; JSON has none",
        interceptor=interceptor,
        field=what,
        path=path,
    )


def check_finite(value: Any, interceptor: str, what: str) -> None:
    """-32602 when ``value`` (a config or context object) holds NaN or +-Infinity."""
    if find_non_finite(value) is not None:
        raise non_finite(interceptor, what, value)

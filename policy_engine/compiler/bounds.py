"""Limits that keep evaluation time bounded: payload size and nesting depth.

The size is the payload's compact JSON in UTF-8 (`json_size`, what `size($)`
says). The check encodes the payload once with orjson, in C, inside as many
lists of our own as make orjson's nesting limit the depth limit (`nesting`),
so that one encoding settles the depth too; where it cannot tell, the depth
is read from the text. The same check refuses non-finite numbers (NaN,
Infinity): they are not JSON, and every comparison with NaN is false, so a
`>` rule would let one through. What orjson cannot encode is checked by an
iterative walk instead, which stops as soon as a limit is passed and never
recurses, so a hostile 100,000-level payload cannot raise RecursionError.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import isfinite
from typing import Any

import re2

from ..language.limits import SourceLimits
from ..language.path_syntax import format_location
from ..language.re2_config import re2_options
from ..wire.errors import InterceptorError, invalid_params
from ..wire.finite import find_non_finite
from ..wire.unicode import find_bad_text
from .json_size import encoded, json_size
from .matchers import binding, found_in
from .nesting import TOO_DEEP, Encoding, encode_within

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
    """The payload's size in bytes (`json_size`); -32602 when it is too deep, too
    big or holds a non-finite number, in that order."""
    return measure_bounds(payload, limits, interceptor)[0]


def measure_bounds(payload: Any, limits: Limits, interceptor: str) -> tuple[int, Encoding | None]:
    """`check_bounds`, and the encoding it measured, for a `PayloadProbe` to reuse
    (None where orjson refused the payload)."""
    within = encode_within(payload, limits.max_depth)
    if within is TOO_DEEP:
        raise payload_too_deep(interceptor, limits)
    if not isinstance(within, Encoding):  # orjson's limit cannot tell: read the text
        plain = encoded(payload)
        if plain is None:
            check_text(payload, interceptor, "payload")
            return _walk_bounds(payload, limits, interceptor), None
        if _deeper_than(plain, limits.max_depth):
            raise payload_too_deep(interceptor, limits)
        within = Encoding(plain)
    size = within.size
    if size > limits.max_bytes:
        raise payload_too_large(interceptor, limits)
    # orjson writes NaN and the infinities as `null`: only then is there
    # anything to look for (the lists around the payload hold none).
    if _holds_null(within.wrapped) and find_non_finite(payload) is not None:
        raise non_finite(interceptor, "payload", payload)
    return size, within


# RE2's search for `null` (the binding's, on bytes) is about three times
# quicker than `bytes.__contains__` on a message full of `n` and `l`; on a
# short one its fixed cost per call is more than the whole search.
_NULL = binding(re2.compile("null", re2_options()))
_SHORT = 2048


def _holds_null(data: bytes) -> bool:
    return b"null" in data if len(data) < _SHORT else found_in(_NULL, data)


# The encoding reduced to its quotes and brackets, with `{}` read as `[]`.
_BRACKETS_ONLY = bytes.maketrans(b"{}", b"[]")
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'[]{}"')


def _deeper_than(data: bytes, limit: int) -> bool:
    """Whether compact JSON ``data`` nests containers deeper than ``limit``.

    Escaped backslashes and quotes are dropped (only when there is a
    backslash at all), so every remaining quote opens or closes a string;
    the text is then reduced to its quotes and brackets in one pass. Dropping
    two adjacent quotes never moves a character in or out of a string, so
    the empty strings (keys, most values) go next, and what lies outside the
    rest is a balanced sequence of brackets: each pass that deletes every
    `[]` removes exactly one level (an empty pair is always innermost).
    """
    if b"\\" in data:
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    structure = data.translate(_BRACKETS_ONLY, _NOT_STRUCTURE)
    if structure.count(b"[") <= limit:
        return False
    structure = structure.replace(b'""', b"")
    if b'"' in structure:
        structure = b"".join(structure.split(b'"')[::2])
    depth = 0
    while structure:
        structure = structure.replace(b"[]", b"")
        depth += 1
        if depth > limit:
            return True
    return False


def _walk_bounds(payload: Any, limits: Limits, interceptor: str) -> int:
    """`check_bounds` by an iterative walk, for what orjson does not encode.

    The walk estimates as it goes (strings by length, other scalars small) to
    stop early on a payload far too big, then measures exactly. A
    container's plain children are counted where it is visited (only
    containers go on the stack).
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
    try:
        size = json_size(payload)
    except (TypeError, ValueError):  # not JSON at all: the estimate is all there is
        return limits.max_bytes - budget
    if size > limits.max_bytes:
        raise payload_too_large(interceptor, limits)
    return size


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
    """-32602 when ``value`` (a config or context object) holds NaN or +-Infinity,
    or a string that is not Unicode text."""
    if find_non_finite(value) is not None:
        raise non_finite(interceptor, what, value)
    check_text(value, interceptor, what)


def check_text(value: Any, interceptor: str, what: str) -> None:
    """-32602 naming where a lone surrogate sits (I-JSON): no peer could be sent it.

    Only values orjson refused reach this for a payload, so valid ones pay nothing.
    """
    bad = find_bad_text(value)
    if bad is not None:
        raise invalid_params(
            f"{what} holds a string that is not valid Unicode at `{bad.path}`",
            interceptor=interceptor,
            field=what,
            **bad.where(),
        )

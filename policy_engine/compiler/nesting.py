"""The depth bound from orjson's own nesting limit, at no cost per byte.

orjson refuses to encode containers nested past a fixed limit (254 in orjson
3). Encoding the payload inside ``limit - max_depth`` lists of our own makes
orjson refuse exactly the payloads that nest deeper than ``max_depth``, so
the encoding the bounds check makes anyway settles the depth too. Reading
the depth from the text instead (`bounds._deeper_than`) cost a translation
of every byte: about a third of a small rule's invoke on a 10 KB message.

The limit and the message orjson refuses with are found once, by trying it;
should a release encode past the depth tried, or call it something else,
`encode_within` answers None and the caller reads the depth itself.
"""

from __future__ import annotations

import threading
from typing import Any, Final, NamedTuple

import orjson

# Deepest nesting tried when looking for orjson's limit.
_TRIED_DEPTH: Final = 4096


class TooDeep:
    """`encode_within`'s answer for a payload nested deeper than ``max_depth``."""


TOO_DEEP: Final = TooDeep()


def _nested(depth: int) -> Any:
    value: Any = None
    for _ in range(depth):
        value = [value]
    return value


def _find_limit() -> tuple[int, str] | None:
    """The deepest nesting orjson encodes and what it says past it; None if it
    encodes everything tried."""
    try:
        orjson.dumps(_nested(_TRIED_DEPTH))
    except orjson.JSONEncodeError as refused:
        message = str(refused)
    else:
        return None
    low, high = 0, _TRIED_DEPTH  # encodes `low` levels, refuses `high`
    while high - low > 1:
        middle = (low + high) // 2
        try:
            orjson.dumps(_nested(middle))
        except orjson.JSONEncodeError:
            high = middle
        else:
            low = middle
    return low, message


_LIMIT = _find_limit()


class _Wrappers(threading.local):
    """Per thread, per count: nested lists whose innermost slot takes the payload
    (made once; building them for each call would cost more than it saves)."""

    def __init__(self) -> None:
        self.by_levels: dict[int, tuple[list[Any], list[Any]]] = {}

    def get(self, levels: int) -> tuple[list[Any], list[Any]]:
        made = self.by_levels.get(levels)
        if made is None:
            inner: list[Any] = [None]
            outer = inner
            for _ in range(levels - 1):
                outer = [outer]
            made = self.by_levels[levels] = (outer, inner)
        return made


_WRAPPERS = _Wrappers()


class Encoding(NamedTuple):
    """A payload's compact JSON as the bounds check made it: inside ``levels``
    lists of our own on each side."""

    wrapped: bytes
    levels: int = 0

    @property
    def size(self) -> int:
        """The payload's own encoded size."""
        return len(self.wrapped) - 2 * self.levels

    def plain(self) -> bytes:
        """The payload's own encoding: a copy, made only by those who read the text."""
        if not self.levels:
            return self.wrapped
        return self.wrapped[self.levels : len(self.wrapped) - self.levels]


def encode_within(payload: Any, max_depth: int) -> Encoding | TooDeep | None:
    """The payload's `Encoding`; `TOO_DEEP` when it nests deeper than
    ``max_depth``; or None where this cannot tell (orjson refused it for
    another reason, or the limit is not known): the caller then checks itself.

    The lists of our own stay on until someone reads the text: cutting them
    off copies the encoding, and the size and the `null` check need no copy.
    """
    if _LIMIT is None:
        return None
    limit, message = _LIMIT
    levels = limit - max_depth
    if levels <= 0:
        return None
    outer, inner = _WRAPPERS.get(levels)
    inner[0] = payload
    try:
        data = orjson.dumps(outer)
    except orjson.JSONEncodeError as refused:
        return TOO_DEEP if str(refused) == message else None
    finally:
        inner[0] = None
    return Encoding(data, levels)

"""Where a NaN or an infinity sits in a JSON-like value, for refusing it.

JSON has no non-finite numbers, and every comparison with NaN is false, so a
`>` rule would let one through. The wire's parser refuses them in text
(`json_text`); this finds them in values built in Python, which a library
caller hands over directly.
"""

from __future__ import annotations

from math import isfinite
from typing import Any


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

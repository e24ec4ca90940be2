"""The size of a JSON value: the bytes of its compact UTF-8 encoding.

One measure for `size(x)`, `limit size` and the payload bound
(`bounds.check_bounds`), so the three never disagree. orjson encodes in C,
about eight times faster than walking the value in Python; what it refuses
(a lone surrogate, an integer past 64 bits, a non-string key, a type JSON
lacks) is measured by the standard library instead. Floats are written in
their shortest round-trip form (`1e16`); the fallback writes `1e+16`, a byte
more, which only a value orjson refuses for another reason can show.
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def encoded(value: Any) -> bytes | None:
    """``value`` as compact UTF-8 JSON, or None where orjson refuses it.

    orjson writes NaN and the infinities as `null`: a caller that must
    refuse them checks for itself (`bounds.check_bounds` does).
    """
    try:
        return orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return None


def json_size(value: Any) -> int:
    """Bytes of the compact JSON encoding of ``value``, the size a limit talks about."""
    data = encoded(value)
    if data is not None:
        return len(data)
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return len(text.encode("utf-8", "surrogatepass"))

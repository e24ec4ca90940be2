"""RFC 8785 JSON Canonicalization Scheme (JCS), as the conformance suite compares results.

Three rules make JCS differ from a sorted-key ``json.dumps``: object keys are
ordered by their UTF-16 code units (an astral-plane character sorts before
U+E000..U+FFFF), numbers are written the way ECMAScript's ``Number.prototype
.toString`` writes them (``1e+21``, ``0.000001``, ``5e-324``), and strings
escape only what JSON requires (``"``, ``\\``, and control characters, with the
short forms where there is one), leaving every other character as it is.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

# Integers beyond 2**53 are not exact doubles: JCS treats every number as one.
_EXACT_INT = 2**53
_SHORT_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


class CanonicalizationError(ValueError):
    """The value has no JSON form: NaN, an infinity, a lone surrogate, a non-JSON type."""


def canonicalize(value: Any) -> str:
    """The JCS text of a JSON value (encode it as UTF-8 for the canonical bytes)."""
    parts: list[str] = []
    _write(value, parts)
    return "".join(parts)


def _write(value: Any, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(_string(value))
    elif isinstance(value, int):
        out.append(str(value) if -_EXACT_INT <= value <= _EXACT_INT else _number(_float(value)))
    elif isinstance(value, float):
        out.append(_number(value))
    elif isinstance(value, Mapping):
        _object(value, out)
    elif isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _write(item, out)
        out.append("]")
    else:
        raise CanonicalizationError(f"{type(value).__name__} is not a JSON value")


def _object(value: Mapping[Any, Any], out: list[str]) -> None:
    for key in value:
        if not isinstance(key, str):
            raise CanonicalizationError(f"object key {key!r} is not a string")
    out.append("{")
    for index, key in enumerate(sorted(value, key=_utf16_order)):
        if index:
            out.append(",")
        out.append(_string(key))
        out.append(":")
        _write(value[key], out)
    out.append("}")


def _utf16_order(key: str) -> bytes:
    """Big-endian UTF-16 bytes compare exactly as the code units do."""
    try:
        return key.encode("utf-16-be")
    except UnicodeEncodeError:
        raise CanonicalizationError("object key holds a lone surrogate") from None


def _string(text: str) -> str:
    parts = ['"']
    for char in text:
        escaped = _SHORT_ESCAPES.get(char)
        if escaped is not None:
            parts.append(escaped)
        elif char < " ":
            parts.append(f"\\u{ord(char):04x}")
        elif "\ud800" <= char <= "\udfff":
            raise CanonicalizationError("string holds a lone surrogate")
        else:
            parts.append(char)
    parts.append('"')
    return "".join(parts)


def _float(value: int) -> float:
    try:
        return float(value)
    except OverflowError:
        raise CanonicalizationError("integer is too large for a JSON number") from None


def _number(value: float) -> str:
    """ECMAScript Number::toString over Python's shortest round-trip digits."""
    if not math.isfinite(value):
        raise CanonicalizationError(f"{value} is not a JSON number")
    if value == 0:
        return "0"
    if value < 0:
        return "-" + _number(-value)
    digits, point = _shortest_digits(value)
    count = len(digits)
    if count <= point <= 21:
        return digits + "0" * (point - count)
    if 0 < point <= 21:
        return f"{digits[:point]}.{digits[point:]}"
    if -6 < point <= 0:
        return "0." + "0" * -point + digits
    exponent = point - 1
    sign = "+" if exponent >= 0 else "-"
    mantissa = digits if count == 1 else f"{digits[0]}.{digits[1:]}"
    return f"{mantissa}e{sign}{abs(exponent)}"


def _shortest_digits(value: float) -> tuple[str, int]:
    """Digits ``d1..dk`` (no leading or trailing zeros) and ``n``: value = 0.d1..dk * 10**n."""
    text = repr(value)
    mantissa, _, exponent = text.partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    point = len(whole) + (int(exponent) if exponent else 0)
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    return stripped.rstrip("0"), point

"""Strict JSON text: the one parser every entry point uses (stdio, HTTP, ``policyc eval``).

Python's ``json`` module and pydantic's parser both accept ``NaN``,
``Infinity`` and ``-Infinity`` (pydantic by default), and both turn a literal
such as ``1e400`` into ``inf``. None of these is a JSON number (RFC 8259), and
a non-finite number defeats comparisons: ``NaN > 100`` is false, so a budget
rule would let it through. Here they are refused before any policy sees them.

The fast path is pydantic-core's parser with ``allow_inf_nan=False``. It
refuses lone surrogate escapes (``"\\ud800"``) too, so a document it refuses
is parsed again by the standard library with hooks that refuse the
non-finite constants: that second pass also names the reason precisely. A
document the second pass reads but that holds a lone surrogate (in a value
or a key) is refused as well (``InvalidText``): JSON's grammar allows the
escape, but it is not Unicode text (I-JSON, RFC 7493), cannot be written
towards a backend, and must never reach one. Only documents that could hold an
overflowing literal (a three-digit exponent or a 309-digit run) are walked
for ``inf`` afterwards, so ordinary messages pay nothing for that check.
"""

from __future__ import annotations

import json
import math
from typing import Any, NoReturn

import re2
from pydantic_core import from_json

from .unicode import NOT_UNICODE, BadText, find_bad_text

NOT_JSON = "not valid JSON"
NON_FINITE = "NaN and Infinity are not JSON numbers"
OUT_OF_RANGE = "number out of range"
TOO_DEEP = "nesting too deep"
NOT_UTF8 = "not UTF-8"

_PYDANTIC_TOO_DEEP = "recursion limit exceeded"
# On RE2, whose DFA reads each byte once: Python's `re` tried the 309-digit
# branch at every digit, about 300 us on a 10 KB message (more than the parse).
_MAY_OVERFLOW = re2.compile(r"[0-9][eE]\+?0*[1-9][0-9]{2}|[0-9]{309}")


class JSONTextError(ValueError):
    """Why a text is not strict JSON. ``reason`` is one of this module's constants
    and never quotes the text, so it is safe to send back to a client."""

    def __init__(self, reason: str, line: int | None = None, column: int | None = None) -> None:
        where = f" (line {line}, column {column})" if line is not None else ""
        super().__init__(f"{reason}{where}")
        self.reason = reason
        self.line = line
        self.column = column


class InvalidText(JSONTextError):
    """JSON whose strings are not all Unicode text. Carries the parsed document, so
    a transport can answer the request under its own id, and where the string is."""

    def __init__(self, bad: BadText, document: Any) -> None:
        super().__init__(NOT_UNICODE)
        self.bad = bad
        self.document = document


class _NonFinite(ValueError):
    pass


def loads(data: str | bytes | bytearray) -> Any:
    """The value of a JSON document; ``JSONTextError`` if it is not strict JSON."""
    try:
        value = from_json(data, allow_inf_nan=False)
    except ValueError as exc:
        if _PYDANTIC_TOO_DEEP in str(exc):
            raise JSONTextError(TOO_DEEP) from None
        return _loads_stdlib(data)
    text: Any = data if isinstance(data, str | bytes) else bytes(data)
    if _MAY_OVERFLOW.search(text) is not None and not _all_finite(value):
        raise JSONTextError(OUT_OF_RANGE)
    return value


def _refuse_constant(_name: str) -> NoReturn:
    raise _NonFinite(NON_FINITE)


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise _NonFinite(OUT_OF_RANGE)
    return number


def _loads_stdlib(data: str | bytes | bytearray) -> Any:
    try:
        text = data if isinstance(data, str) else bytes(data).decode("utf-8")
    except UnicodeDecodeError:
        raise JSONTextError(NOT_UTF8) from None
    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise JSONTextError(NOT_JSON, exc.lineno, exc.colno) from None
    except _NonFinite as exc:
        raise JSONTextError(str(exc)) from None
    except RecursionError:
        raise JSONTextError(TOO_DEEP) from None
    except ValueError:  # an integer past the interpreter's digit limit
        raise JSONTextError(OUT_OF_RANGE) from None
    bad = find_bad_text(value)
    if bad is not None:
        raise InvalidText(bad, value)
    return value


def _all_finite(value: Any) -> bool:
    """No ``inf`` anywhere in ``value``: iterative, so depth cannot raise."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                return False
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return True


__all__ = [
    "NON_FINITE",
    "NOT_JSON",
    "NOT_UNICODE",
    "NOT_UTF8",
    "OUT_OF_RANGE",
    "TOO_DEEP",
    "InvalidText",
    "JSONTextError",
    "loads",
]

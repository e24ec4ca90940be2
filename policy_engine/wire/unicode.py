"""Where a string that is not Unicode text sits in a JSON-like value, for refusing it.

JSON's ``\\ud800`` escape decodes to a lone surrogate: a Python string, but
not Unicode text, so it cannot be written as UTF-8 (I-JSON, RFC 7493 s2.1).
Let through, it fails the first time the message is encoded for a peer (a
backend, an interceptor server), where it looked like the peer dying and took
every other client's requests with it. The wire's parser refuses it in text
(``json_text``); this finds it in values built in Python, which a library
caller hands over directly. Callers look only when a fast encoder (orjson,
pydantic-core) has already refused the value, so valid messages pay nothing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

NOT_UNICODE = "string is not valid Unicode (a lone surrogate)"

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_KEY_SHOWN = 64
"""Longest key spelled out in a path: a path names where, it does not carry content."""


@dataclass(frozen=True, slots=True)
class BadText:
    """The first invalid string found: its location, and whether it is an object key."""

    location: tuple[str | int, ...]
    in_key: bool

    @property
    def path(self) -> str:
        return json_path(self.location)

    def where(self) -> dict[str, Any]:
        """For a JSON-RPC error's ``data``: the path, never the string itself."""
        return {"path": self.path, **({"in": "key"} if self.in_key else {})}


def is_text(value: str) -> bool:
    """Whether ``value`` can be written as UTF-8 (holds no lone surrogate)."""
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def find_bad_text(value: Any) -> BadText | None:
    """The first string (value or key) in ``value`` that is not Unicode text; iterative."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        item, location = stack.pop()
        if isinstance(item, str):
            if not is_text(item):
                return BadText(location, in_key=False)
        elif isinstance(item, dict):
            for key in item:
                if isinstance(key, str) and not is_text(key):
                    return BadText(location, in_key=True)
            stack.extend((v, (*location, k)) for k, v in reversed(item.items()))
        elif isinstance(item, list | tuple):
            stack.extend((v, (*location, i)) for i, v in reversed(list(enumerate(item))))
    return None


def json_path(location: tuple[str | int, ...]) -> str:
    """``$.params.arguments[0]``: identifiers after dots, other keys quoted and cut short."""
    parts = ["$"]
    for key in location:
        if isinstance(key, int):
            parts.append(f"[{key}]")
        elif _IDENTIFIER.match(key) and len(key) <= _KEY_SHOWN:
            parts.append(f".{key}")
        else:
            shown = key if len(key) <= _KEY_SHOWN else key[:_KEY_SHOWN] + "..."
            parts.append(f"[{json.dumps(shown, ensure_ascii=True)}]")
    return "".join(parts)


__all__ = ["NOT_UNICODE", "BadText", "find_bad_text", "is_text", "json_path"]

"""One scan of a payload's own JSON text can show that a regex matches none of its strings.

The bounds check has already encoded the payload as compact UTF-8 JSON. When
that text holds no backslash, no string or key of the payload holds a
character JSON escapes (a quote, a backslash, a control character, so no
newline either), and each one sits in the text verbatim between two quotes.
Turn every quote into a newline and each string is a line of its own. A
`context_free` regex in line mode that matches a string alone then matches
that text at the same place, for the reason `matchers.touched_segments`
gives: `^`, `$` and `\\b` see the newlines as they see a string's ends.

So a regex that finds nothing in the probe text matches no string of the
payload, whichever path or function column a rule reads: the rule's answer
is known without walking its path, joining its strings or scanning them
(a clean 10 KB message costs one scan per interceptor instead). The
converse does not hold (the text also holds keys, numbers and punctuation):
a hit only means the rule runs as before. A payload whose text has a
backslash, or that orjson refuses, is never probed.

A text function can be looked through when it changes no string of the
payload: `url_decode` when the text has no `%`, `normalize` when it is
ASCII (`UNCHANGED_BY`; conditions.py reads the same tests off a column's join).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .json_size import encoded
from .matchers import found_in

_UNSET: Any = object()

# Text functions that can leave every string as it is, and the test on UTF-8
# text (a probe's, or a column's join) that says they will: no `%` leaves
# `url_decode` nothing to do, and ASCII text is its own NFKC form.
UNCHANGED_BY: Mapping[str, Callable[[bytes], bool]] = {
    "url_decode": lambda text: b"%" not in text,
    "normalize": bytes.isascii,
}


class PayloadProbe:
    """A payload's JSON with quotes turned into newlines, and what scans of it found."""

    __slots__ = ("_data", "_found", "_text", "payload")

    def __init__(self, payload: Any, data: bytes | None = None) -> None:
        self.payload = payload
        # The payload's compact JSON when the caller already has it (the bounds check).
        self._data = data
        self._text: bytes | None = _UNSET
        self._found: dict[int, tuple[Any, bool]] = {}

    def text(self) -> bytes | None:
        """The probe text, or None when the payload cannot be probed."""
        if self._text is _UNSET:
            data = self._data if self._data is not None else encoded(self.payload)
            self._text = None if data is None or b"\\" in data else data.replace(b'"', b"\n")
        return self._text

    def rules_out(self, compiled: Any, through: tuple[str, ...] = ()) -> bool:
        """Whether the line-mode regex (its `matchers.binding`) matches no string of the
        payload, nor any string the functions ``through`` make of them."""
        text = self.text()
        if text is None:
            return False
        for function in through:
            if not UNCHANGED_BY[function](text):
                return False
        cached = self._found.get(id(compiled))
        if cached is not None and cached[0] is compiled:
            return not cached[1]
        found = found_in(compiled, text)
        self._found[id(compiled)] = (compiled, found)
        return not found

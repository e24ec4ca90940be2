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
(`ProbeRegexes` asks for all of a policy set's regexes in one pass). The
converse does not hold (the text also holds keys, numbers and punctuation):
a hit only means the rule runs as before. A payload whose text has a
backslash, or that orjson refuses, is never probed.

The same encoding says when a `$..name` path can find nothing: a payload
with a member `name` anywhere holds the key's encoding and a colon
(`"name":`) in its text, escapes or not, so a text without it has no such
member and the rule reading that path has nothing to do.

A text function can be looked through when it changes no string of the
payload: `url_decode` when the text has no `%`, `normalize` when it is
ASCII (`UNCHANGED_BY`; conditions.py reads the same tests off a column's join).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import orjson
import re2

from ..language.path_steps import Descend, Field
from ..language.re2_config import re2_options
from .json_size import encoded
from .matchers import MAX_SET_PATTERNS, binding, found_in

_UNSET: Any = object()

# Text functions that can leave every string as it is, and the test on UTF-8
# text (a probe's, or a column's join) that says they will: no `%` leaves
# `url_decode` nothing to do, and ASCII text is its own NFKC form.
UNCHANGED_BY: Mapping[str, Callable[[bytes], bool]] = {
    "url_decode": lambda text: b"%" not in text,
    "normalize": bytes.isascii,
}


def member_key(name: str) -> bytes:
    """How a member named ``name`` starts in compact JSON: its key and the colon."""
    return orjson.dumps(name) + b":"


def descendant_names(steps: Sequence[object]) -> tuple[bytes, ...] | None:
    """The `member_key`s a path starting `$..name` needs one of, else None."""
    if len(steps) < 2 or not isinstance(steps[0], Descend) or not isinstance(steps[1], Field):
        return None
    return tuple(member_key(name) for name in steps[1].names)


# Past this many regexes a Set pass costs more than it saves (a thousand
# `matching` rules on one field already share one scan of their own): the
# rules registered later do not probe.
MAX_PROBE_REGEXES = 64


class ProbeRegexes:
    """Every line-mode regex a policy set's rules ask a probe about, scanned together.

    One `re2.Set` pass over a payload's probe text says which of them occur,
    for every rule of every interceptor: a clean message costs one scan per
    payload, not one per rule. A Set out of DFA memory reports nothing, so
    an empty answer is confirmed by the chunk's alternation (on which RE2
    falls back to its NFA and stays exact); when that finds something, the
    chunk's regexes are asked one by one.
    """

    def __init__(self) -> None:
        self._sources: dict[str, int] = {}
        self._compiled: list[Any] = []
        self._chunks: list[tuple[int, int, Any, Any]] = []
        self._sealed = 0

    def add(self, compiled: Any) -> int | None:
        """The index of a line-mode regex (an `re2` pattern object), added once per
        source; None once `MAX_PROBE_REGEXES` are registered (that rule does not probe)."""
        source: str = compiled.pattern
        index = self._sources.get(source)
        if index is None:
            if len(self._compiled) >= MAX_PROBE_REGEXES:
                return None
            index = self._sources[source] = len(self._compiled)
            self._compiled.append(binding(compiled))
        return index

    def seal(self) -> None:
        """Build the Sets; rules added later are asked one by one."""
        sources = list(self._sources)
        self._sealed = len(sources)
        self._chunks = []
        for offset in range(0, len(sources), MAX_SET_PATTERNS):
            part = sources[offset : offset + MAX_SET_PATTERNS]
            chunk = re2.Set.SearchSet(re2_options())
            for source in part:
                chunk.Add(source)
            chunk.Compile()
            union = re2.compile("|".join(f"(?:{source})" for source in part), re2_options())
            self._chunks.append((offset, offset + len(part), chunk, binding(union)))

    def occurring(self, text: bytes) -> tuple[set[int], set[int]]:
        """The indexes that occur in ``text``, and those a Set could not answer for."""
        found: set[int] = set()
        unknown: set[int] = set()
        for start, end, chunk, union in self._chunks:
            # The stubs say bool; at run time it is the list of matching indexes.
            matched: Any = chunk.Match(text)
            if matched:
                found.update(start + index for index in matched)
            elif found_in(union, text):
                unknown.update(range(start, end))
        return found, unknown

    def found_in(self, index: int, text: bytes) -> bool:
        return found_in(self._compiled[index], text)

    def answers_for(self, index: int) -> bool:
        """Whether the Sets hold regex ``index`` (it was added before `seal`)."""
        return index < self._sealed


class PayloadProbe:
    """A payload's JSON with quotes turned into newlines, and what scans of it found.

    A probe made for a message that several interceptors will read (``whole``)
    answers its first question with the Set pass over every regex; one made
    for a mutator's intermediate payload, which one or two more rules read,
    scans only for the regexes asked.
    """

    __slots__ = (
        "_absent",
        "_data",
        "_found",
        "_members",
        "_text",
        "_unknown",
        "_whole",
        "payload",
        "regexes",
    )

    def __init__(
        self,
        payload: Any,
        regexes: ProbeRegexes,
        data: bytes | None = None,
        whole: bool = True,
    ) -> None:
        self.payload = payload
        self.regexes = regexes
        # The payload's compact JSON when the caller already has it (the bounds check).
        self._data = data
        self._text: bytes | None = _UNSET
        self._whole = whole
        self._found: set[int] | None = None
        self._unknown: set[int] = set()
        self._absent: set[int] = set()
        self._members: dict[tuple[bytes, ...], bool] = {}

    def inherit_members(self, other: PayloadProbe) -> None:
        """Take what ``other`` found of missing members: the caller knows this payload
        has the same keys (only string values changed)."""
        self._members.update(other._members)

    def reuse_text(self, other: PayloadProbe) -> None:
        """Take the encoding and text ``other`` made of this same payload."""
        if other.payload is self.payload:
            self._data = self._data or other._data
            if other._text is not _UNSET:
                self._text = other._text

    def _encoding(self) -> bytes | None:
        if self._data is None:
            self._data = encoded(self.payload)
        return self._data

    def text(self) -> bytes | None:
        """The probe text, or None when the payload cannot be probed."""
        if self._text is _UNSET:
            data = self._encoding()
            self._text = None if data is None or b"\\" in data else data.replace(b'"', b"\n")
        return self._text

    def lacks_members(self, names: tuple[bytes, ...]) -> bool:
        """Whether no object of the payload has a member by any of ``names`` (each
        given as its key's JSON encoding and a colon, `member_key`); remembered,
        as several rules read the same `$..name`."""
        known = self._members.get(names)
        if known is None:
            data = self._encoding()
            known = data is not None and not any(name in data for name in names)
            self._members[names] = known
        return known

    def rules_out(self, index: int, through: tuple[str, ...] = ()) -> bool:
        """Whether regex ``index`` of `regexes` matches no string of the payload, nor
        any string the functions ``through`` make of them."""
        text = self.text()
        if text is None:
            return False
        for function in through:
            if not UNCHANGED_BY[function](text):
                return False
        if self._found is None:
            if self._whole:
                self._found, self._unknown = self.regexes.occurring(text)
            else:
                self._found, self._unknown = set(), set()
        if index in self._found:
            return False
        if index in self._absent:
            return True
        if not self._whole or index in self._unknown or not self.regexes.answers_for(index):
            found = self.regexes.found_in(index, text)
            (self._found if found else self._absent).add(index)
            return not found
        return True

"""Text matching on RE2: named patterns, inline regexes and globs.

All patterns of one rule are joined into a single alternation with one named
group each, so a value is scanned once however many patterns a rule lists;
`lastgroup` tells which pattern hit, and only those candidates pay for a
check such as Luhn. RE2's default memory budget is raised so large
alternations stay on its fast DFA path instead of falling back.

A pattern may mark the part of its match that is the sensitive value with a
group named `value` (`api_key=(?P<value>...)`): the hit, its check and any
replacement then cover that group only, so the label and the context the
regex needed around it survive. A match whose value group is empty or took no
part is no hit; a branch without the group thus skips text (RE2 has no
lookbehind: `version 1.2.3.4` can be consumed and passed over this way).

Many strings are scanned as one text (`TextMatcher.hits_many`): the RE2
wrapper costs about a microsecond per call and several per match on `str`,
far more than RE2's own search, so one call over all of a rule's strings,
on UTF-8 bytes, beats one call per string. The strings are joined with a
newline; where a match runs into or out of a string, that string's scan
goes on confined to it (`segment_spans`), so the hits are always exactly
those of separate scans. ASCII-only text, the common case, is scanned with
Latin-1 programs, which find the same matches and are smaller
(`TextMatcher._scan_programs`).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import accumulate, count
from operator import add
from typing import Any, NamedTuple

import re2

from ..language import ast
from ..language.model import ResolvedPattern
from ..language.re2_config import re2_options, regex_with_flags
from .candidate_checks import CANDIDATE_CHECKS


@dataclass(frozen=True)
class PatternSpec:
    """One pattern after name resolution: a label for reports, its regex, its check."""

    label: str
    regex: str
    check: Callable[[str], bool] | None


def pattern_specs(
    refs: Sequence[ast.PatternRef], patterns: dict[str, ResolvedPattern]
) -> list[PatternSpec]:
    specs = []
    for ref in refs:
        if isinstance(ref, ast.PatternName):
            resolved = patterns[ref.name]
            check = CANDIDATE_CHECKS.get(resolved.check) if resolved.check else None
            specs.append(
                PatternSpec(ref.name, regex_with_flags(resolved.source, resolved.flags), check)
            )
        else:
            specs.append(
                PatternSpec(
                    f"/{ref.source}/{ref.flags}", regex_with_flags(ref.source, ref.flags), None
                )
            )
    return specs


class Hit(NamedTuple):
    """One occurrence: its span in the string and the pattern's label.

    A named tuple, not a dataclass: a message makes hundreds, and a tuple is
    built in C.
    """

    start: int
    end: int
    label: str


# `Hit(start, end, label)` from a tuple, in C: the named tuple's own `__new__` is a
# Python function, and a message full of personal data makes hundreds of hits.
_hit: Callable[[tuple[int, int, str]], Hit] = partial(tuple.__new__, Hit)


def matchable(text: str) -> str:
    """The text RE2 can read: lone surrogates (legal in a JSON string, absent from
    UTF-8) become U+FFFD, one code point for one, so offsets still line up."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)
    return text


_GROUP = "_policyc"
# Past this many patterns a Set is not worth building (match_groups splits its
# own Sets at the same size, to keep each within RE2's memory budget).
MAX_SET_PATTERNS = 256
_SEPARATOR = "\n"
# The binding's unanchored search: `_Regexp._match` without its per-match
# Python work (offset decoding, group-name lookups).
UNANCHORED: Any = re2._Anchor.UNANCHORED  # type: ignore[attr-defined]
# The encoding of the programs that scan ASCII-only data (`TextMatcher._scan_programs`).
LATIN1: Any = re2.Options.Encoding.LATIN1  # type: ignore[attr-defined]


def binding(regex: re2._Regexp[str]) -> Any:
    """The compiled RE2 object under the wrapper, whose `Match` is one C call."""
    return regex._regexp  # type: ignore[attr-defined]


def found_in(compiled: Any, data: bytes) -> bool:
    """Whether the compiled RE2 object (`binding`) matches anywhere in ``data``."""
    return bool(compiled.Match(UNANCHORED, data, 0, len(data))[0][1] >= 0)


def _spans(compiled: Any, data: bytes) -> Iterator[Any]:
    """Every match's group spans, in byte offsets, as the wrapper's finditer steps."""
    pos = 0
    end = len(data)
    match = compiled.Match
    while True:
        spans = match(UNANCHORED, data, pos, end)
        found = spans[0][1]
        if found < 0:
            return
        yield spans
        if pos == end:
            return
        if found == pos:  # an empty match here: step over one UTF-8 character
            pos += _char_width(data[pos])
        else:
            pos = found


def segment_spans(match: Any, data: bytes, bounds: list[int]) -> list[tuple[Any, int]]:
    """Every non-empty match a scan of each segment alone finds, and its segment, in order.

    ``data`` holds the segments (none with a newline) joined with newlines,
    segment ``k`` from ``bounds[k]`` up to the separator at ``bounds[k + 1] - 1``
    (`_bounds`), and ``match`` is the `Match` of a `context_free` regex in
    line mode (`binding`). Scanning the join freely finds what the segments'
    own scans find, as long as no match leaves its segment: `^`, `$` and
    `\\b` see a separator as they see a string's ends, and a match inside a
    segment is one alone. Where a match does leave it, no match of the
    segment alone starts before it (that one would have been found first),
    so:

    - a match that starts on the separator after a segment belongs to
      neither: the next segment's scan begins right after it;
    - a match that starts inside a segment and runs past its end makes the
      scan go on from the same place with the segment's end as the end of
      the text (RE2 still reads the separator as context), then resume
      freely at the next segment.

    Empty matches are stepped over as a scan alone steps over them, and
    not reported. `_value_candidates` is this loop inlined; keep them alike.
    """
    found: list[tuple[Any, int]] = []
    size = len(data)
    pos = 0
    # Matches come in order: the segment changes only once one starts past it.
    segment = following = limit = -1
    while True:
        spans = match(UNANCHORED, data, pos, size)
        start, end = spans[0]
        if end < 0:
            return found
        if start >= following:
            segment = bisect_right(bounds, start) - 1
            following = bounds[segment + 1]
            limit = following - 1
        if end <= limit:
            if start != end:
                found.append((spans, segment))
                pos = end
            elif end == size:
                return found
            else:
                pos = end + _char_width(data[end])
            continue
        if start < limit:
            found += [(confined, segment) for confined in _confined(match, data, start, limit)]
        pos = following


def _confined(match: Any, data: bytes, pos: int, limit: int) -> list[Any]:
    """The non-empty matches of one segment's scan from ``pos``, ``limit`` being the
    end of its text."""
    found = []
    while pos <= limit:
        spans = match(UNANCHORED, data, pos, limit)
        start, end = spans[0]
        if end < 0:
            break
        if start != end:
            found.append(spans)
            pos = end
        elif end == limit:
            break
        else:
            pos = end + _char_width(data[end])
    return found


# One pass of `TextMatcher._candidates` with a pass of its own: the pattern's
# index, its binding's `Match`, its value group and its check.
_Pass = tuple[int, Any, int, "Callable[[str], bool] | None"]


def _value_candidates(
    found: list[tuple[int, int, int, int]], pass_: _Pass, data: bytes, bounds: list[int]
) -> None:
    """Append (start, pattern, end, segment) of each hit one pattern's pass finds.

    `segment_spans` inlined, with the value group and check applied as each
    match comes: this loop runs once per match of every pass.
    """
    index, match, group, check = pass_
    append = found.append
    anchor = UNANCHORED
    size = len(data)
    pos = 0
    segment = following = limit = -1
    while True:
        spans = match(anchor, data, pos, size)
        start, end = spans[0]
        if end < 0:
            return
        if start >= following:
            segment = bisect_right(bounds, start) - 1
            following = bounds[segment + 1]
            limit = following - 1
        if end <= limit:
            if start == end:
                if end == size:
                    return
                pos = end + _char_width(data[end])
                continue
            pos = end
            start, end = spans[group]
            if start != end and (check is None or check(data[start:end].decode("utf-8"))):
                append((start, index, end, segment))
            continue
        if start < limit:
            for spans in _confined(match, data, start, limit):
                start, end = spans[group]
                if start != end and (check is None or check(data[start:end].decode("utf-8"))):
                    append((start, index, end, segment))
        pos = following


def _bounds(lengths: Iterable[int]) -> list[int]:
    """Where each of the segments of these byte lengths starts in their newline join,
    and one more entry: the join's length plus one."""
    return list(map(add, accumulate(lengths, initial=0), count()))


def _char_width(lead: int) -> int:
    """How many bytes the UTF-8 character starting with byte ``lead`` takes."""
    return 1 if lead < 0xC0 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4


def context_free(regex: str) -> bool:
    """Whether the regex, in line mode, matches inside a newline-joined text as alone.

    Batches hold strings without a newline and scan with `(?m)`, so `^` and
    `$` meet at the ends of each string as they do on the string alone;
    `\\b` and `\\B` see the newline as they see the ends. `\\A` and `\\z`
    (outside a character class) still mean the ends of the whole text, and a
    flag group that turns `m` off undoes line mode: those patterns are never
    batched. Errs towards False (an escaped `\\A` in a class counts too).
    """
    in_class = False
    i = 0
    n = len(regex)
    while i < n:
        char = regex[i]
        if char == "\\":
            if i + 1 < n and regex[i + 1] in "Az" and not in_class:
                return False
            i += 2
            continue
        if in_class:
            if char == "]":
                in_class = False
        elif char == "[":
            in_class = True
            # A `]` (after an optional `^`) first in a class is a literal.
            if regex.startswith("^", i + 1):
                i += 1
            if regex.startswith("]", i + 1):
                i += 1
        elif char == "(" and regex.startswith("(?", i):
            flags = regex[i + 2 : i + 2 + len(regex)]
            end = min((k for k in (flags.find(":"), flags.find(")")) if k >= 0), default=-1)
            if end >= 0 and "-" in flags[:end] and "m" in flags[flags.index("-") : end]:
                return False
        i += 1
    return True


def line_mode(regex: str) -> str:
    return f"(?m:{regex})"


def joined_bytes(texts: Sequence[str]) -> tuple[bytes, list[int]]:
    """``texts`` as RE2 reads them, joined with newlines into UTF-8, and each one's byte start."""
    cleaned = [matchable(text) for text in texts]
    joined = _SEPARATOR.join(cleaned)
    data = joined.encode("utf-8")
    starts = []
    offset = 0
    ascii_only = len(data) == len(joined)
    for text in cleaned:
        starts.append(offset)
        offset += (len(text) if ascii_only else len(text.encode("utf-8"))) + 1
    return data, starts


def touched_segments(line_regex: re2._Regexp[str], data: bytes, starts: list[int]) -> set[int]:
    """The texts that may hold a match, from one scan of them all joined: a superset.

    ``data`` and ``starts`` are the texts as `joined_bytes` gives them, and
    ``line_regex`` is a `context_free` regex in line mode. A match of the
    regex in a text alone is a match at the same place in the joined text
    (`^`, `$`, `\\b` see the separating newline as they see the ends), and the
    scan only ever steps over text inside a match it reports or one
    character past an empty one; every text a reported match touches is
    kept, so a text holding a match is never left out. Newlines inside a
    text, and matches across texts, can only add texts.
    """
    if not starts:
        return set()
    compiled = binding(line_regex)
    if not found_in(compiled, data):
        return set()
    touched: set[int] = set()
    for spans in _spans(compiled, data):
        start, end = spans[0]
        first = bisect_right(starts, start) - 1
        last = bisect_right(starts, max(end - 1, start)) - 1
        touched.update(range(first, last + 1))
    return touched


VALUE_GROUP = "value"


def value_group(regex: str) -> int:
    """The index of the pattern's `value` group, 0 (the whole match) without one."""
    return int(re2.compile(regex, re2_options()).groupindex.get(VALUE_GROUP, 0))


def _value_span(match: Any, group: int) -> tuple[int, int]:
    """The hit's span: the value group's, (-1, -1) when that group took no part."""
    span: tuple[int, int] = match.span(group)
    return span


def _search_set(regexes: Sequence[str], latin1: bool = False) -> Any:
    """An unanchored `re2.Set` of ``regexes`` (in Latin-1 when asked, for regexes that
    have a Latin-1 program), or None past the size one Set holds well."""
    if not regexes or len(regexes) > MAX_SET_PATTERNS:
        return None
    options = re2_options()
    if latin1:
        options.encoding = LATIN1
    chunk = re2.Set.SearchSet(options)
    for regex in regexes:
        source: Any = regex.encode("latin-1") if latin1 else regex
        chunk.Add(source)
    chunk.Compile()
    return chunk


def _group_indexes(alternation: re2._Regexp[Any], count: int) -> list[int]:
    """The group number of each pattern's own group in an alternation of ``count``
    patterns (`_GROUP` and the pattern's place), compiled from `str` or Latin-1."""
    groups: dict[Any, int] = dict(alternation.groupindex)
    names = [f"{_GROUP}{k}" for k in range(count)]
    if not isinstance(alternation.pattern, str):
        return [groups[name.encode("latin-1")] for name in names]
    return [groups[name] for name in names]


def _alternation(specs: Sequence[PatternSpec]) -> re2._Regexp[str] | None:
    if not specs:
        return None
    groups = [f"(?P<{_GROUP}{i}>{spec.regex})" for i, spec in enumerate(specs)]
    return re2.compile("|".join(groups), re2_options())


@dataclass(frozen=True)
class _Programs:
    """What `TextMatcher._candidates` runs for one kind of scan: the bindings'
    `Match` of the joinable patterns' alternation (None without any) and the
    group of each of them in it, a pass for each other pattern, their Set
    (None when one is not worth it) and the test of all the patterns together
    without captures."""

    joined: Any
    groups: list[int]
    passes: list[_Pass]
    alone_set: Any
    any_test: Any


def compiled(regex: str, latin1: bool = False, never_capture: bool = False) -> re2._Regexp[Any]:
    """``regex`` compiled with the matching options, in Latin-1 when asked (the
    programs `TextMatcher` scans ASCII-only text with): then `UnicodeEncodeError`
    or `re2.error` when Latin-1 cannot say it (a character past U+00FF)."""
    options = re2_options()
    options.never_capture = never_capture
    if not latin1:
        return re2.compile(regex, options)
    options.encoding = LATIN1
    return re2.compile(regex.encode("latin-1"), options)


class TextMatcher:
    """Finds the occurrences of any of several patterns in a string, in linear time.

    Patterns without a candidate check are joined into one alternation with a
    named group each and scanned in one leftmost-first pass. A pattern with a
    check (Luhn, IBAN, entropy) gets a pass of its own, so a candidate that
    fails its check never hides another pattern's match at the same place.
    The passes' hits are merged leftmost first, the pattern listed first
    winning ties; every pass resumes after each match, so hostile input (a
    megabyte of digits failing Luhn) costs one scan per pass, never more.
    """

    def __init__(self, specs: Sequence[PatternSpec]) -> None:
        self.specs = list(specs)
        self._labels = [spec.label for spec in self.specs]
        # A value group skips matches like a failed check does, so such a
        # pattern gets a pass of its own and never hides another one's hit.
        self._value = [value_group(spec.regex) for spec in self.specs]
        plain = [
            i for i, spec in enumerate(self.specs) if spec.check is None and not self._value[i]
        ]
        # A user's own group named like ours would confuse `lastgroup`: such a
        # pattern gets a pass of its own instead.
        joinable = [i for i in plain if f"(?P<{_GROUP}" not in self.specs[i].regex]
        self._joined_index = joinable
        self._joined = _alternation([self.specs[i] for i in joinable])
        self._alone_index = [i for i in range(len(self.specs)) if i not in joinable]
        self._alone = [
            (i, re2.compile(self.specs[i].regex, re2_options())) for i in self._alone_index
        ]
        self._any = _alternation(self.specs)
        self._batchable = self._any is not None and all(
            context_free(spec.regex) for spec in self.specs
        )
        self._line_any: re2._Regexp[str] | None = None
        if self._batchable:
            self._line_any = _alternation(
                [PatternSpec(s.label, line_mode(s.regex), s.check) for s in self.specs]
            )
        # What `_candidates` runs, by (line mode, ASCII-only data). The UTF-8
        # programs are built here, so a pattern RE2 cannot compile fails the
        # policy's load; the Latin-1 ones on first use (`_scan_programs`).
        self._programs: dict[tuple[bool, bool], _Programs] = {}
        if self.specs:
            for lines in (False, True) if self._batchable else (False,):
                self._programs[(lines, False)] = self._build(lines, latin1=False)

    def _scan_programs(self, lines: bool, ascii_only: bool) -> _Programs:
        """The programs for a scan in line mode or as written, of ASCII-only data or not.

        On ASCII-only data a Latin-1 program finds exactly what the UTF-8 one
        finds: every byte is a character, RE2's `\\b`, `\\w`, `\\d`
        and `\\s` are ASCII in both, and what differs (characters past
        U+007F) cannot occur. Its negated classes are one byte range rather
        than UTF-8 sequences, so programs are smaller: more of them fit the
        512 instructions under which RE2 finds a value group by backtracking
        over the match (BitState) rather than with its NFA, several times
        dearer. A pattern that names a character past U+00FF has no Latin-1
        program; its matcher then scans ASCII-only data in UTF-8 as well.
        """
        found = self._programs.get((lines, ascii_only))
        if found is None:
            try:
                found = self._build(lines, latin1=True)
            except (UnicodeEncodeError, re2.error):
                found = self._programs[(lines, False)]
            self._programs[(lines, ascii_only)] = found
        return found

    def _build(self, lines: bool, latin1: bool) -> _Programs:
        """The `_Programs` for a scan in line mode or as written, in Latin-1 or UTF-8."""
        regexes = [line_mode(s.regex) if lines else s.regex for s in self.specs]
        joined: Any = None
        groups: list[int] = []
        if self._joined_index:
            body = "|".join(
                f"(?P<{_GROUP}{k}>{regexes[i]})" for k, i in enumerate(self._joined_index)
            )
            alternation = compiled(body, latin1)
            joined = binding(alternation).Match
            groups = _group_indexes(alternation, len(self._joined_index))
        passes = [
            (i, binding(compiled(regexes[i], latin1)).Match, self._value[i], self.specs[i].check)
            for i in self._alone_index
        ]
        any_test = compiled("|".join(f"(?:{regex})" for regex in regexes), latin1, True)
        alone_set = _search_set([regexes[i] for i in self._alone_index], latin1)
        return _Programs(joined, groups, passes, alone_set, binding(any_test))

    @property
    def probe_regex(self) -> re2._Regexp[str] | None:
        """All the patterns in line mode, for a `PayloadProbe`; None when some
        pattern is not `context_free`."""
        return self._line_any

    @staticmethod
    def _occurring_alone(programs: _Programs, data: bytes) -> list[_Pass] | None:
        """The passes of ``programs`` worth running over ``data``: those whose pattern
        occurs; None when no pattern occurs at all.

        One `re2.Set` scan says which of them match anywhere; a pattern that
        does not occur can have no candidate, so its pass is skipped. When the
        Set names one, something occurs and the test of all the patterns is
        not needed. A Set out of DFA memory reports nothing at all, so on an
        empty answer that test decides, and then every pass runs.
        """
        passes = programs.passes
        found_set = programs.alone_set
        if found_set is not None and len(passes) > 1:
            # The stubs say bool; at run time it is the list of matching indexes.
            present: Any = found_set.Match(data)
            if present:
                if len(present) == len(passes):
                    return passes
                wanted = set(present)
                return [pass_ for k, pass_ in enumerate(passes) if k in wanted]
        if not found_in(programs.any_test, data):
            return None
        return passes

    def matching(
        self, texts: Sequence[str], joined: Callable[[], tuple[bytes, list[int]]] | None = None
    ) -> list[int]:
        """The positions of the texts that `search` finds a hit in, in order.

        One scan of all the texts joined (``joined`` gives the join when the
        caller shares one, see `text_columns`) narrows them to those that
        may match (`touched_segments`); only those are searched one by one.
        """
        if self._any is None:
            return []
        if self._batchable and len(texts) > 1:
            assert self._line_any is not None
            data, starts = joined() if joined is not None else joined_bytes(texts)
            suspects = sorted(touched_segments(self._line_any, data, starts))
        else:
            suspects = list(range(len(texts)))
        return [k for k in suspects if self.search(texts[k])]

    def hits_many(self, texts: Sequence[str]) -> list[list[Hit]]:
        """The hits of each text, exactly as `hits` finds them, from one scan of most.

        Strings without a newline are joined with one and scanned together in
        line mode (`segment_spans`); a string holding a newline is scanned on
        its own instead.
        """
        if not texts:
            return []
        if not self._batchable:
            return [list(self.hits(text)) for text in texts]
        joined = _SEPARATOR.join(texts)
        if joined.count(_SEPARATOR) == len(texts) - 1:  # no string holds a newline
            return self._scan_batch(texts, joined)
        out: list[list[Hit]] = [[] for _ in texts]
        batch = [k for k, text in enumerate(texts) if _SEPARATOR not in text]
        if batch:
            batched = [texts[k] for k in batch]
            for k, hits in zip(
                batch, self._scan_batch(batched, _SEPARATOR.join(batched)), strict=True
            ):
                out[k] = hits
        for k, text in enumerate(texts):
            if _SEPARATOR in text:
                out[k] = list(self.hits(text))
        return out

    def _scan_batch(self, texts: Sequence[str], joined: str) -> list[list[Hit]]:
        """The hits of each of ``texts`` (none with a newline), ``joined`` being their
        newline join."""
        out: list[list[Hit]] = [[] for _ in texts]
        ascii_only = joined.isascii()
        if ascii_only:
            data = joined.encode("ascii")
            bounds = _bounds(map(len, texts))
        else:
            # One code point for one: the separators stay where they were.
            data = matchable(joined).encode("utf-8")
            bounds = _bounds(map(len, data.split(b"\n")))
        last_end = 0
        labels = self._labels
        programs = self._scan_programs(True, ascii_only)
        for start, index, end, segment in self._candidates(programs, data, bounds):
            if start < last_end:
                continue
            last_end = end
            base = bounds[segment]
            out[segment].append(_hit((start - base, end - base, labels[index])))
        if len(data) != len(joined):
            for segment, text in enumerate(texts):
                hits = out[segment]
                base, stop = bounds[segment], bounds[segment + 1] - 1
                if hits and stop - base != len(text):
                    out[segment] = _char_offsets(data[base:stop], hits)
        return out

    def _candidates(
        self, programs: _Programs, data: bytes, bounds: list[int]
    ) -> list[tuple[int, int, int, int]]:
        """(start, pattern, end, segment) of every candidate, sorted, each pass
        confined to each segment as a scan of it alone (`segment_spans`)."""
        alone = self._occurring_alone(programs, data)
        if alone is None:
            return []
        found: list[tuple[int, int, int, int]] = []
        passes = 0
        if programs.joined is not None:
            groups = programs.groups
            index_of = self._joined_index
            for spans, segment in segment_spans(programs.joined, data, bounds):
                start, end = spans[0]
                for k, group in enumerate(groups):
                    if spans[group][0] >= 0:
                        found.append((start, index_of[k], end, segment))
                        break
            passes = bool(found)
        for pass_ in alone:
            before = len(found)
            _value_candidates(found, pass_, data, bounds)
            passes += len(found) > before
        # Each pass finds its candidates in order: only several need sorting.
        if passes > 1:
            found.sort()
        return found

    def _alone_hits(
        self, index: int, regex: re2._Regexp[str], text: str
    ) -> Iterator[tuple[int, int, int]]:
        check = self.specs[index].check
        group = self._value[index]
        for match in regex.finditer(text):
            start, end = _value_span(match, group)
            if start != end and (check is None or check(text[start:end])):
                yield (start, index, end)

    def hits(self, text: str) -> Iterator[Hit]:
        """The hits in one string, leftmost first, from the RE2 binding on its UTF-8.

        The same passes and merge as a batch of one (`_candidates`), with the
        patterns as written rather than in line mode, so a newline inside
        the string means what it means alone.
        """
        if self._any is None:
            return iter(())
        text = matchable(text)
        data = text.encode("utf-8")
        hits = []
        last_end = 0
        labels = self._labels
        programs = self._scan_programs(False, text.isascii())
        for start, index, end, _segment in self._candidates(programs, data, [0, len(data) + 1]):
            if start >= last_end:
                hits.append(_hit((start, end, labels[index])))
                last_end = end
        if hits and len(data) != len(text):
            hits = _char_offsets(data, hits)
        return iter(hits)

    def search(self, text: str) -> bool:
        """Whether any pattern has a hit; stops at the first candidate that passes."""
        text = matchable(text)
        if self._any is None or self._any.search(text) is None:
            return False
        if self._joined is not None and self._joined.search(text) is not None:
            return True
        return any(
            next(self._alone_hits(index, regex, text), None) is not None
            for index, regex in self._alone
        )


def _char_offsets(data: bytes, hits: list[Hit]) -> list[Hit]:
    """Hits in byte offsets of a text's UTF-8 ``data`` as offsets in the text itself."""
    out = []
    byte = char = 0
    for hit in hits:
        char += len(data[byte : hit.start].decode("utf-8"))
        start = char
        char += len(data[hit.start : hit.end].decode("utf-8"))
        byte = hit.end
        out.append(Hit(start, char, hit.label))
    return out


def glob_regex(glob: str) -> str:
    """`*` is any run of characters, `?` one character; everything else is literal."""
    out = []
    for char in glob:
        if char == "*":
            out.append(".*")
        elif char == "?":
            out.append(".")
        elif char.isalnum() or char == "_":
            out.append(char)
        else:
            out.append(f"\\x{{{ord(char):x}}}")
    return "".join(out)


class GlobMatcher:
    """Whole-string match against any of several globs.

    Globs whose only wildcards are `*` at their ends (`claude-*`, `*_unsafe`,
    `*admin*`, a plain name) are answered by `str` methods: one set lookup
    and one `startswith`/`endswith` of a tuple, far cheaper than a call into
    RE2 for a tool or model name. Any other glob makes the whole list one
    RE2 alternation.
    """

    def __init__(self, globs: Sequence[str]) -> None:
        self.globs = tuple(globs)
        self._regex: re2._Regexp[str] | None = None
        self._literal = _literal_globs(self.globs)
        if globs and self._literal is None:
            body = "|".join(f"(?:{glob_regex(g)})" for g in globs)
            self._regex = re2.compile(f"(?s)\\A(?:{body})\\z", re2_options())

    def matches(self, text: str) -> bool:
        text = matchable(text)
        if self._literal is not None:
            return self._literal.matches(text)
        if self._regex is None:
            return False
        # The binding's search, not the wrapper's: a tool name is short, and
        # the wrapper's own work per call is most of the cost.
        return found_in(binding(self._regex), text.encode("utf-8"))


@dataclass(frozen=True)
class _LiteralGlobs:
    """Globs with `*` only at their ends, by what each asks of the text."""

    exact: frozenset[str]
    prefixes: tuple[str, ...]
    suffixes: tuple[str, ...]
    inner: tuple[str, ...]

    def matches(self, text: str) -> bool:
        return (
            text in self.exact
            or text.startswith(self.prefixes)
            or text.endswith(self.suffixes)
            or any(part in text for part in self.inner)
        )


def _literal_globs(globs: Sequence[str]) -> _LiteralGlobs | None:
    """The globs as `_LiteralGlobs`, or None when one has a `?` or an inner `*`."""
    exact: set[str] = set()
    prefixes: list[str] = []
    suffixes: list[str] = []
    inner: list[str] = []
    for glob in globs:
        core = glob.strip("*")
        if "*" in core or "?" in core:
            return None
        starred_front = glob.startswith("*")
        starred_back = glob.endswith("*")
        if starred_front and starred_back:
            inner.append(core)
        elif starred_front:
            suffixes.append(core)
        elif starred_back:
            prefixes.append(core)
        else:
            exact.add(core)
    return _LiteralGlobs(frozenset(exact), tuple(prefixes), tuple(suffixes), tuple(inner))

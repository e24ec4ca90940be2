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
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import re2

from ..language import ast
from ..language.check_regex import regex_with_flags
from ..language.model import ResolvedPattern
from .candidate_checks import CANDIDATE_CHECKS

MAX_MEM = 64 << 20


def re2_options() -> re2.Options:
    options = re2.Options()
    options.log_errors = False
    options.max_mem = MAX_MEM
    return options


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


@dataclass(frozen=True)
class Hit:
    start: int
    end: int
    label: str


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
VALUE_GROUP = "value"


def value_group(regex: str) -> int:
    """The index of the pattern's `value` group, 0 (the whole match) without one."""
    return int(re2.compile(regex, re2_options()).groupindex.get(VALUE_GROUP, 0))


def _value_span(match: Any, group: int) -> tuple[int, int]:
    """The hit's span: the value group's, (-1, -1) when that group took no part."""
    span: tuple[int, int] = match.span(group)
    return span


def _alternation(specs: Sequence[PatternSpec]) -> re2._Regexp[str] | None:
    if not specs:
        return None
    groups = [f"(?P<{_GROUP}{i}>{spec.regex})" for i, spec in enumerate(specs)]
    return re2.compile("|".join(groups), re2_options())


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
        self._alone = [
            (i, re2.compile(self.specs[i].regex, re2_options()))
            for i in range(len(self.specs))
            if i not in joinable
        ]
        self._any = _alternation(self.specs)

    def _joined_hits(self, text: str) -> list[tuple[int, int, int]]:
        hits: list[tuple[int, int, int]] = []
        if self._joined is None:
            return hits
        for match in self._joined.finditer(text):
            start, end = match.span()
            if start != end:
                group: Any = match.lastgroup  # the stubs say int; it is the name
                hits.append((start, self._joined_index[int(group[len(_GROUP) :])], end))
        return hits

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
        text = matchable(text)
        if not self._alone:
            for start, index, end in self._joined_hits(text):
                yield Hit(start, end, self.specs[index].label)
            return
        if self._any is None or self._any.search(text) is None:
            return
        candidates = self._joined_hits(text)
        for index, regex in self._alone:
            candidates.extend(self._alone_hits(index, regex, text))
        last_end = 0
        for start, index, end in sorted(candidates):
            if start >= last_end:
                yield Hit(start, end, self.specs[index].label)
                last_end = end

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
    """Whole-string match against any of several globs, as one RE2 alternation."""

    def __init__(self, globs: Sequence[str]) -> None:
        self.globs = tuple(globs)
        if globs:
            body = "|".join(f"(?:{glob_regex(g)})" for g in globs)
            self._regex: re2._Regexp[str] | None = re2.compile(
                f"(?s)\\A(?:{body})\\z", re2_options()
            )
        else:
            self._regex = None

    def matches(self, text: str) -> bool:
        return self._regex is not None and self._regex.search(matchable(text)) is not None

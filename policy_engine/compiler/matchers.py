"""Text matching on RE2: named patterns, inline regexes and globs.

All patterns of one rule are joined into a single alternation with one named
group each, so a value is scanned once however many patterns a rule lists;
`lastgroup` tells which pattern hit, and only those candidates pay for a
check such as Luhn. RE2's default memory budget is raised so large
alternations stay on its fast DFA path instead of falling back.
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


class TextMatcher:
    """Finds the occurrences of any of several patterns in a string, in one pass."""

    def __init__(self, specs: Sequence[PatternSpec]) -> None:
        self.specs = list(specs)
        groups = [f"(?P<p{i}>{spec.regex})" for i, spec in enumerate(self.specs)]
        self._regex = re2.compile("|".join(groups), re2_options())
        self._needs_check = any(spec.check for spec in self.specs)

    def _spec_of(self, match: re2._Match[str]) -> PatternSpec:
        # The stubs type `lastgroup` as int; at run time it is the group's name.
        group: Any = match.lastgroup
        return self.specs[int(group[1:])] if group else self.specs[0]

    def hits(self, text: str) -> Iterator[Hit]:
        for match in self._regex.finditer(text):
            spec = self._spec_of(match)
            if spec.check is not None and not spec.check(match.group()):
                continue
            start, end = match.span()
            if start == end:
                continue
            yield Hit(start, end, spec.label)

    def search(self, text: str) -> bool:
        if not self._needs_check:
            return self._regex.search(text) is not None
        return next(self.hits(text), None) is not None


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
        return self._regex is not None and self._regex.search(text) is not None

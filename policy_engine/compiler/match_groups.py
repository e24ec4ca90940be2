"""Many `matches` rules on one field cost one scan per invoke, not one per rule.

Every `matches` predicate of an interceptor whose subject is the same JSONPath
joins a group. Per invoke, the group finds the path's values once and scans
each string once: an alternation of all the group's patterns answers "does
anything match?" (RE2 stays correct there even when its DFA runs out of
memory), and only when something does, an `re2.Set` says which patterns hit.
Each hit is confirmed by the pattern's own matcher, which also applies
candidate checks such as Luhn. Predicates then only look up their index.
Before any of that, one scan of all the path's strings joined (in line mode,
see `matchers.touched_segments`) leaves only the strings that may match, so
a clean message costs one RE2 call per group, not one per string.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import re2

from ..language import ast
from ..language.model import ResolvedPattern
from ..language.re2_config import re2_options
from ..language.walk import find
from .jsonpath import CompiledPath, find_memoised
from .matchers import (
    PatternSpec,
    TextMatcher,
    context_free,
    line_mode,
    matchable,
    pattern_specs,
    touched_segments,
)
from .text_columns import column_of

NO_HITS: frozenset[int] = frozenset()

# Past this many patterns a Set is split, keeping each within RE2's memory budget.
MAX_SET_SIZE = 256

Location = tuple[str | int, ...]
# Where each pattern first hits, when none does.
NO_FIRST: Mapping[int, Location] = MappingProxyType({})
Scanned = list[tuple[Any, Location, frozenset[int]]]


@dataclass(frozen=True)
class GroupScan:
    """A path's values with the patterns each one hits, and where each pattern first hits."""

    entries: Scanned
    first: dict[int, Location]


def pattern_key(ref: ast.PatternRef) -> str:
    if isinstance(ref, ast.PatternName):
        return f"name:{ref.name}"
    return f"regex:{ref.flags}:{ref.source}"


class MatchGroup:
    def __init__(self, path: CompiledPath, specs: list[PatternSpec]) -> None:
        self.path = path
        # The memo key of "where each pattern first hits" in an invoke (conditions.py).
        self.first_key = object()
        self.specs = specs
        self._any = re2.compile("|".join(f"(?:{s.regex})" for s in specs), re2_options())
        self._sets: list[tuple[int, Any]] = []
        for offset in range(0, len(specs), MAX_SET_SIZE):
            chunk = re2.Set.SearchSet(re2_options())
            for spec in specs[offset : offset + MAX_SET_SIZE]:
                chunk.Add(spec.regex)
            chunk.Compile()
            self._sets.append((offset, chunk))
        self._confirm = [TextMatcher([spec]) for spec in specs]
        self._line_any = (
            re2.compile("|".join(f"(?:{line_mode(s.regex)})" for s in specs), re2_options())
            if all(context_free(s.regex) for s in specs)
            else None
        )

    @property
    def probe_regex(self) -> re2._Regexp[str] | None:
        """The group's patterns in line mode, for a `PayloadProbe`, or None."""
        return self._line_any

    def hits(self, text: str) -> frozenset[int]:
        text = matchable(text)
        if self._any.search(text) is None:
            return NO_HITS
        found: list[int] = []
        for offset, chunk in self._sets:
            # The stubs say bool; at run time it is the list of matching indexes.
            matched: Any = chunk.Match(text)
            found.extend(offset + index for index in matched or ())
        if not found:
            # A Set out of DFA memory reports nothing; the alternation said
            # something matched, so ask every pattern directly.
            found = list(range(len(self.specs)))
        return frozenset(i for i in found if self._confirm[i].search(text))

    def scan(self, payload: Any, memo: dict[Any, Any]) -> GroupScan:
        """The path's values with the patterns each one hits, once per payload."""
        cached = memo.get(self)
        if cached is not None and cached[0] is payload:
            result: GroupScan = cached[1]
            return result
        found = find_memoised(self.path, payload, memo)
        suspects: set[int] | None = None
        if self._line_any is not None and len(found) > 1:
            # One scan of the strings joined leaves only those that may match.
            column = column_of(found, memo)
            data, starts = column.joined()
            touched = touched_segments(self._line_any, data, starts)
            suspects = {column.positions[k] for k in touched}
        scanned: Scanned = [
            (
                value,
                location,
                self.hits(value)
                if isinstance(value, str) and (suspects is None or k in suspects)
                else NO_HITS,
            )
            for k, (value, location) in enumerate(found)
        ]
        first: dict[int, Location] = {}
        for _, location, hits in scanned:
            for index in hits:
                first.setdefault(index, location)
        result = GroupScan(scanned, first)
        memo[self] = (payload, result)
        return result


GroupIndex = dict[tuple[str, str], tuple[MatchGroup, int]]


def build_match_groups(
    rules: Iterable[ast.Rule],
    patterns: dict[str, ResolvedPattern],
    path_of: Any,
) -> GroupIndex:
    """Groups for every path that two or more distinct `matches` patterns test."""
    by_path: dict[str, dict[str, ast.PatternRef]] = {}
    for rule in rules:
        for node in find(rule, ast.Matches):
            if isinstance(node.subject, ast.PathRef):
                refs = by_path.setdefault(node.subject.source, {})
                refs.setdefault(pattern_key(node.pattern), node.pattern)
    index: GroupIndex = {}
    for source, refs in by_path.items():
        if len(refs) < 2:
            continue
        keys = list(refs)
        group = MatchGroup(path_of(source), pattern_specs([refs[k] for k in keys], patterns))
        for position, key in enumerate(keys):
            index[(source, key)] = (group, position)
    return index

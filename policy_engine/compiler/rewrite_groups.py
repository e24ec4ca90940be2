"""Many `redact`/`mask`/`hash ... matching` rules on one path cost one scan, not one each.

Consecutive unguarded pattern rules over the same JSONPath form a group. Per
invoke, the group joins the strings the path reaches and asks an `re2.Set`
of all its patterns which of them occur at all; only the rules whose
patterns occur run, in source order, exactly as they would alone. A rule that
changes a string can create or destroy matches for the rules after it, so
the Set is asked again over the new strings after every rule that changed
something. The Set runs in line mode, so `^` and `$` still meet every
string's ends (a newline inside a string can only add candidates); patterns
anchored to the whole text (`\\A`, `\\z`) always run; a Set
that reports nothing although the patterns' alternation matches (its DFA out
of memory) makes every rule run, so a memory limit can never skip a rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import re2

from ..language.re2_config import re2_options
from .conditions import EvalContext
from .match_groups import MAX_SET_SIZE
from .matchers import context_free, line_mode, matchable
from .mutators import CompiledMutation, Counts, strings_in
from .trace import RuleEvent

_SEPARATOR = "\n"


class RewriteGroup:
    """Pattern rules over one path, run as a unit; see the module docstring."""

    def __init__(self, members: Sequence[CompiledMutation]) -> None:
        self.members = list(members)
        self.path = self.members[0].path
        regexes: list[str] = []
        owners: list[int] = []
        self._always: set[int] = set()
        for position, member in enumerate(self.members):
            assert member.rewrite is not None
            for spec in member.rewrite.matcher.specs:
                if context_free(spec.regex):
                    regexes.append(line_mode(spec.regex))
                    owners.append(position)
                else:
                    self._always.add(position)
        self._owners = owners
        self._sets: list[tuple[int, Any]] = []
        for offset in range(0, len(regexes), MAX_SET_SIZE):
            chunk = re2.Set.SearchSet(re2_options())
            for regex in regexes[offset : offset + MAX_SET_SIZE]:
                chunk.Add(regex)
            chunk.Compile()
            self._sets.append((offset, chunk))
        self._any = (
            re2.compile("|".join(f"(?:{r})" for r in regexes), re2_options()) if regexes else None
        )
        # Each member's probe regex, when a `PayloadProbe` can rule them all out.
        probes = [member.probe for member in self.members]
        self._probes = [p for p in probes if p is not None] if None not in probes else []

    def _occurring(self, payload: Any) -> set[int]:
        """Members whose patterns occur somewhere in the strings the path reaches."""
        texts = strings_in(value for value, _ in self.path.find(payload))
        if not texts:
            return set()
        data = _SEPARATOR.join(matchable(t) for t in texts).encode("utf-8")
        found = set(self._always)
        reported = False
        for offset, chunk in self._sets:
            # The stubs say bool; at run time it is the list of matching indexes.
            matched: Any = chunk.Match(data)
            for index in matched or ():
                found.add(self._owners[offset + index])
                reported = True
        if not reported and self._any is not None and self._any.search(data) is not None:
            return set(range(len(self.members)))
        return found

    def apply(
        self, ctx: EvalContext, pattern_counts: Counts, events: list[RuleEvent] | None
    ) -> list[tuple[CompiledMutation, int]]:
        """Run the members that can change something; each one's change count, in order."""
        out: list[tuple[CompiledMutation, int]] = []
        if self._probes and all(ctx.rules_out(probe) for probe in self._probes):
            return out
        pending = sorted(self._occurring(ctx.payload))
        while pending:
            position = pending.pop(0)
            member = self.members[position]
            mine: list[RuleEvent] | None = [] if events is not None else None
            after, changed = member.apply(ctx, pattern_counts, mine)
            if not changed:
                continue
            if events is not None and mine:
                events.extend(mine)
            out.append((member, changed))
            ctx.payload = after
            later = self._occurring(after)
            pending = sorted(p for p in later if p > position)
        return out


def group_rewrites(mutations: list[CompiledMutation]) -> list[CompiledMutation | RewriteGroup]:
    """Consecutive unguarded `matching` rules on the same path, grouped (two or more)."""
    out: list[CompiledMutation | RewriteGroup] = []
    run: list[CompiledMutation] = []

    def flush() -> None:
        if len(run) >= 2:
            out.append(RewriteGroup(run))
        else:
            out.extend(run)
        run.clear()

    for mutation in mutations:
        groupable = mutation.rewrite is not None and mutation.guard is None
        if groupable and run and run[0].source != mutation.source:
            flush()
        if groupable:
            run.append(mutation)
        else:
            flush()
            out.append(mutation)
    flush()
    return out

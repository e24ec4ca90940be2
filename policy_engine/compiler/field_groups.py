"""Consecutive `$..name` rules that write strings run from one walk, not one each.

The personal-data pack opens with `redact $..email`, `redact $..ssn` and
`mask $..card_number`: three walks of the whole message, three copies of
the way to each change. A run of such rules (unguarded, one name each, each
change a string: `redact`, `mask`, `hash` without `matching`) is a group.
One walk finds every name's locations on the payload as given; the members
then decide in source order, exactly as they would run one after another:

* a location inside a value an earlier member replaced is gone (a string has
  no members), so it is skipped;
* a location an earlier member replaced holds that member's string, and the
  later member sees the string;
* a location above an earlier change would show the later member a changed
  container, which the first walk does not have: the group then applies
  what it has and lets that member and the rest run on their own.

The changes are applied in one copy-on-write patch at the end.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..language.path_steps import Descend, Field
from .conditions import EvalContext
from .jsonpath import KEEP, Location, descendant_fields, patch
from .mutators import CompiledMutation, Counts, settle_sizes
from .trace import RuleEvent


def field_name(mutation: CompiledMutation) -> str | None:
    """The name of a groupable rule's `$..name` path, else None."""
    if mutation.guard is not None or not mutation.writes_strings or mutation.transform is None:
        return None
    steps = mutation.path.path.steps
    if len(steps) != 2 or not isinstance(steps[0], Descend) or not isinstance(steps[1], Field):
        return None
    names = steps[1].names
    return names[0] if len(names) == 1 else None


class FieldGroup:
    """`$..name` rules run as a unit; see the module docstring."""

    def __init__(self, members: Sequence[CompiledMutation]) -> None:
        self.members = list(members)
        self.names = [field_name(member) or "" for member in self.members]
        self._all = tuple(dict.fromkeys(self.names))
        self._max_depth = min(member.path.max_depth for member in self.members)
        # One of which the payload must have (each member's own `$..name` key).
        self._members = tuple(dict.fromkeys(k for m in self.members for k in m.members or ()))

    def apply(
        self, ctx: EvalContext, pattern_counts: Counts, events: list[RuleEvent] | None
    ) -> list[tuple[CompiledMutation, int]]:
        """Run the members; each changing one with how many locations it changed, in order."""
        payload = ctx.payload
        if ctx.lacks_members(self._members):
            return []
        found = descendant_fields(payload, self._all, self._max_depth)
        replaced: dict[Location, Any] = {}
        # Only a container can hold another match: while no member has
        # replaced one, no location is inside a replaced value.
        replaced_container = False
        out: list[tuple[CompiledMutation, int]] = []
        # The size changes, added up once (`settle_sizes`).
        resized: list[tuple[Any, str]] = []
        for position, (member, name) in enumerate(zip(self.members, self.names, strict=True)):
            matches = found[name]
            if replaced and _above_a_change(matches, replaced):
                settle_sizes(ctx, resized)
                ctx.payload = patch(payload, replaced)
                return out + _run_alone(self.members[position:], ctx, pattern_counts, events)
            assert member.transform is not None
            update = member.updater(ctx, member.transform, pattern_counts, events, True, resized)
            changed = 0
            for value, location in matches:
                if replaced_container and _inside(location, replaced):
                    continue
                current = replaced.get(location, value)
                new = update(current, location)
                if new is KEEP or new is current:
                    continue
                replaced[location] = new
                kind = type(current)
                replaced_container = replaced_container or kind is dict or kind is list
                changed += 1
            if changed:
                out.append((member, changed))
        settle_sizes(ctx, resized)
        ctx.payload = patch(payload, replaced)
        return out


def _above_a_change(matches: list[tuple[Any, Location]], replaced: dict[Location, Any]) -> bool:
    """Whether a match is a container holding a replaced location (only a container can)."""
    holders = [location for value, location in matches if type(value) in (dict, list)]
    if not holders:
        return False
    above = {location[:depth] for location in replaced for depth in range(len(location))}
    return any(location in above for location in holders)


def _inside(location: Location, replaced: dict[Location, Any]) -> bool:
    """Whether a proper prefix of ``location`` was replaced."""
    return any(location[:depth] in replaced for depth in range(1, len(location)))


def _run_alone(
    members: list[CompiledMutation],
    ctx: EvalContext,
    pattern_counts: Counts,
    events: list[RuleEvent] | None,
) -> list[tuple[CompiledMutation, int]]:
    out = []
    for member in members:
        mine: list[RuleEvent] | None = [] if events is not None else None
        after, changed = member.apply(ctx, pattern_counts, mine)
        if changed:
            if events is not None and mine:
                events.extend(mine)
            ctx.payload = after
            out.append((member, changed))
    return out


def group_fields(plan: list[Any]) -> list[Any]:
    """The plan with each run of two or more groupable `$..name` rules as one FieldGroup."""
    out: list[Any] = []
    run: list[CompiledMutation] = []

    def flush() -> None:
        if len(run) >= 2:
            out.append(FieldGroup(run))
        else:
            out.extend(run)
        run.clear()

    for step in plan:
        if isinstance(step, CompiledMutation) and field_name(step) is not None:
            run.append(step)
        else:
            flush()
            out.append(step)
    flush()
    return out

"""Mutator blocks: rules apply in source order to a copy of the payload.

The caller's payload is never changed: JSONPath updates copy only the
containers on the changed paths. `modified` is true only if some rule
changed something; `info` counts the changes per rule and per pattern.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from ..language import ast
from ..language.path_steps import Descend
from ..language.path_syntax import format_location
from ..wire import MutationResult
from .conditions import (
    CompileEnv,
    ConditionFn,
    EvalContext,
    OperandFn,
    compile_condition,
    compile_operand,
)
from .json_size import encoded, json_size
from .jsonpath import KEEP, REMOVE, CompiledPath
from .matchers import Hit, TextMatcher, pattern_specs
from .payload_probe import descendant_names
from .string_index import StringIndex
from .trace import RuleEvent, RuleRef, Trace, elapsed_ms

DEFAULT_REDACTION = "[REDACTED]"
DEFAULT_PATTERN_REDACTION = "[REDACTED:{pattern}]"
DEFAULT_MASK = "*"
DEFAULT_TRUNCATION = "..."

Counts = dict[str, int]
Transform = Callable[[Any, Counts], Any]
HitTable = dict[str, list[Hit]]


@dataclass(frozen=True)
class PatternRewrite:
    """A `matching` rule: every hit of ``matcher`` in a string becomes ``make(text, label)``.

    The hits of all the strings a rule reaches are found in one scan before
    the update walks the payload (``TextMatcher.hits_many``).
    """

    matcher: TextMatcher
    make: Callable[[str, str], str]

    def scan(self, values: Iterable[Any]) -> Scan:
        """The hits of every string under ``values``, from one walk of each value
        (kept for `apply`) and one scan of their distinct strings."""
        indexes: list[StringIndex] = []
        distinct: dict[str, None] = {}
        for value in values:
            if type(value) is str:  # `$.content[*].text`: a string needs no index
                distinct[value] = None
                continue
            index = StringIndex(value)
            index.texts(distinct)
            indexes.append(index)
        texts = list(distinct)
        table = dict(zip(texts, self.matcher.hits_many(texts), strict=True))
        return Scan(table, {id(index.root): index for index in indexes})

    def apply(
        self,
        value: Any,
        table: HitTable,
        counts: Counts,
        changes: list[tuple[str, str]] | None = None,
        indexes: dict[int, StringIndex] | None = None,
    ) -> Any:
        """``value`` rewritten; each changed string and its replacement go to ``changes``.

        A value `scan` indexed is rebuilt from its index (one copy-on-write
        pass); any other value is walked (`map_strings`).
        """

        def rewrite(text: str) -> str:
            hits = table.get(text)
            if hits is None:
                hits = list(self.matcher.hits(text))
            if not hits:
                return text
            new = substitute(text, hits, self.make, counts)
            if changes is not None:
                changes.append((text, new))
            return new

        index = indexes.get(id(value)) if indexes is not None else None
        if index is not None and index.root is value:
            return index.rewrite(rewrite, table)
        return map_strings(value, rewrite)


class Scan(NamedTuple):
    """What a `matching` rule found before it rewrites: hits per string, and each
    value's `StringIndex` by identity."""

    table: HitTable
    indexes: dict[int, StringIndex]


def growth_of(changes: Sequence[tuple[Any, str]]) -> int:
    """How many bytes replacing each old value (a string or a scalar) by its new string
    adds to the payload's JSON (`json_size`), from one encoding of all the old and one
    of all the new: a list's encoding is its items' and a comma between each two."""
    if not changes:
        return 0
    old = encoded([pair[0] for pair in changes])
    new = encoded([pair[1] for pair in changes])
    if old is not None and new is not None:
        return len(new) - len(old)
    return sum(json_size(after) - json_size(before) for before, after in changes)


def stable_tag(text: str) -> str:
    """A short, stable stand-in for a value: equal inputs give equal tags."""
    data = text.encode("utf-8", "surrogatepass")
    return "sha256:" + hashlib.sha256(data).hexdigest()[:16]


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _canonical_text(value: Any) -> str:
    """Key order must not change a hash: equal objects get equal tags."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def map_strings(value: Any, fn: Callable[[str], str]) -> Any:
    """Apply ``fn`` to every string in ``value``, copying only what changes.

    A container is copied only once one of its items changed, so a subtree
    with nothing to rewrite costs a visit and no allocation.
    """
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        items: list[Any] | None = None
        for index, item in enumerate(value):
            new = map_strings(item, fn)
            if items is not None:
                items.append(new)
            elif new is not item:
                items = value[:index]
                items.append(new)
        return value if items is None else items
    if isinstance(value, dict):
        out: dict[Any, Any] | None = None
        for key, item in value.items():
            new = map_strings(item, fn)
            if new is not item:
                if out is None:
                    out = dict(value)
                out[key] = new
        return value if out is None else out
    return value


def strings_in(values: Iterable[Any]) -> list[str]:
    """Every distinct string under ``values``, in first-seen order."""
    out: dict[str, None] = {}
    stack = list(values)[::-1]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            out[value] = None
        elif isinstance(value, list):
            stack.extend(reversed(value))
        elif isinstance(value, dict):
            stack.extend(reversed(value.values()))
    return list(out)


def substitute(
    text: str,
    hits: TextMatcher | Iterable[Hit],
    make: Callable[[str, str], str],
    counts: Counts,
) -> str:
    """Rebuild ``text`` with every hit (found by ``hits`` if a matcher) replaced by
    ``make(matched_text, label)``."""
    if isinstance(hits, TextMatcher):
        hits = hits.hits(text)
    pieces: list[str] = []
    add = pieces.append
    last = 0
    # A hit is a `(start, end, label)` tuple: unpacked, not read by name.
    for start, end, label in hits:
        add(text[last:start])
        add(make(text[start:end], label))
        counts[label] = counts.get(label, 0) + 1
        last = end
    if not pieces:
        return text
    add(text[last:])
    return "".join(pieces)


def _fill(template: str, label: str, matched: str) -> str:
    return template.replace("{pattern}", label).replace("{length}", str(len(matched)))


def _mask(text: str, keep: int, mask: str) -> str:
    kept = text[-keep:] if keep else ""
    hidden = len(text) - len(kept)
    return mask * hidden + kept if hidden > 0 else text


@dataclass
class CompiledMutation:
    ref: RuleRef
    path: CompiledPath
    guard: ConditionFn | None
    unless: bool
    transform: Transform | None  # None means remove
    source: str = "$"
    set_value: OperandFn | None = None
    is_set: bool = False
    rewrite: PatternRewrite | None = None
    # Every change the rule makes is a string (`redact`, `mask`, `hash` without
    # `matching`): nothing it writes has children (see field_groups.py).
    writes_strings: bool = False
    # The probe regex of a `matching` rule's patterns (payload_probe.py), if any.
    probe: int | None = None
    # For a `$..name` path: the members one of which the payload must have.
    members: tuple[bytes, ...] | None = None
    # The path has no `..` step: finding what it selects costs no walk of the payload.
    shallow: bool = False

    def applies(self, ctx: EvalContext) -> bool:
        if self.guard is None:
            return True
        holds = self.guard(ctx) is not None
        return not holds if self.unless else holds

    def apply(
        self, ctx: EvalContext, pattern_counts: Counts, events: list[RuleEvent] | None
    ) -> tuple[Any, int]:
        """The payload after this rule, and how many locations it changed.

        ``events`` collects a before/after pair per changed leaf when tracing.
        """
        payload = ctx.payload
        if self.is_set:
            return self._set(ctx, events)
        if self.members is not None and ctx.lacks_members(self.members):
            return payload, 0
        transform = self.transform
        rewrite = self.rewrite
        changes: list[tuple[str, str]] = []
        if rewrite is not None:
            # A path without `..` costs what it finds: cheaper than asking the probe
            # (which, after an earlier rule changed the payload, encodes it again)
            # when it finds nothing, the common case for a pack's other rules.
            found = self.path.find(payload) if self.shallow else None
            if found == []:
                return payload, 0
            if self.probe is not None and ctx.rules_out(self.probe):
                return payload, 0
            if found is None:
                found = self.path.find(payload)
            table, indexes = rewrite.scan(value for value, _ in found)
            if not any(table.values()):
                return payload, 0
            transform = lambda value, counts: rewrite.apply(  # noqa: E731
                value, table, counts, changes, indexes
            )

        update = self.updater(ctx, transform, pattern_counts, events, track_size=rewrite is None)
        after, changed = self.path.update(payload, update)
        if rewrite is not None and ctx.size_delta is not None:
            ctx.size_delta += growth_of(changes)
        return after, changed

    def updater(
        self,
        ctx: EvalContext,
        transform: Transform | None,
        pattern_counts: Counts,
        events: list[RuleEvent] | None,
        track_size: bool = True,
        resized: list[tuple[Any, str]] | None = None,
    ) -> Callable[[Any, tuple[str | int, ...]], Any]:
        """What the rule does at one location: the new value, ``KEEP`` or ``REMOVE``.

        With ``track_size`` it also follows the change in the payload's bounds
        estimate (`ctx.size_delta`); pattern rewrites count their growth instead.
        Given ``resized``, each followed change goes there as (old, new), for
        the caller to add up in one go (`settle_sizes`), not one encoding each.
        """

        def update(value: Any, location: tuple[str | int, ...]) -> Any:
            if transform is None:
                if events is not None:
                    events.append(RuleEvent(self.ref, format_location(location), before=value))
                ctx.size_delta = None
                return REMOVE
            new = transform(value, pattern_counts)
            kind = type(value)
            # `_json_equal_fast`, and the rule `_size_change` follows sizes by, inline:
            # this runs once per change.
            if new is value or (type(new) is kind and new == value):
                return KEEP
            if track_size and ctx.size_delta is not None:
                if resized is None:
                    ctx.size_delta = _size_change(value, new, ctx.size_delta)
                elif type(new) is str and (kind is str or kind in _SCALARS):
                    resized.append((value, new))
                else:
                    ctx.size_delta = None
            if events is not None:
                for where, old_leaf, new_leaf in changed_leaves(value, new, location):
                    events.append(
                        RuleEvent(self.ref, format_location(where), before=old_leaf, after=new_leaf)
                    )
            return new

        return update

    def _set(self, ctx: EvalContext, events: list[RuleEvent] | None) -> tuple[Any, int]:
        assert self.set_value is not None
        ctx.size_delta = None
        payload = ctx.payload
        candidates = self.set_value(ctx)
        if not candidates:
            return payload, 0
        value = candidates[0][0]
        current = self.path.find(payload)
        if current and all(_json_equal_fast(old, value) for old, _ in current):
            return payload, 0
        after, changed = self.path.set(payload, value)
        if changed and events is not None:
            before = current[0][0] if current else None
            events.append(RuleEvent(self.ref, self.source, before=before, after=value))
        return after, changed


def pattern_rewrite(rule: ast.MutatorRule, env: CompileEnv) -> PatternRewrite | None:
    """The rewrite of a `redact`, `mask` or `hash` rule with `matching`, else None."""
    patterns = getattr(rule, "patterns", ())
    if not patterns:
        return None
    matcher = TextMatcher(pattern_specs(patterns, env.patterns))
    if isinstance(rule, ast.Redact):
        template = rule.replacement if rule.replacement is not None else DEFAULT_PATTERN_REDACTION
        if "{length}" in template:
            return PatternRewrite(matcher, lambda m, label: _fill(template, label, m))
        filled = {spec.label: _fill(template, spec.label, "") for spec in matcher.specs}
        return PatternRewrite(matcher, lambda m, label: filled[label])
    if isinstance(rule, ast.Mask):
        keep = int(rule.keep or 0)
        mask = rule.replacement if rule.replacement is not None else DEFAULT_MASK
        return PatternRewrite(matcher, lambda m, label: _mask(m, keep, mask))
    if isinstance(rule, ast.Hash):
        return PatternRewrite(matcher, lambda m, label: stable_tag(m))
    return None


def _value_transform(rule: ast.MutatorRule, rewrite: PatternRewrite | None) -> Transform | None:
    if rewrite is not None:
        return lambda value, counts: rewrite.apply(value, {}, counts)
    if isinstance(rule, ast.Remove):
        return None
    if isinstance(rule, ast.Redact):
        replacement = rule.replacement if rule.replacement is not None else DEFAULT_REDACTION
        return lambda value, counts: replacement
    if isinstance(rule, ast.Mask):
        keep = int(rule.keep or 0)
        mask = rule.replacement if rule.replacement is not None else DEFAULT_MASK

        def mask_value(value: Any, counts: Counts) -> Any:
            text = _as_text(value)
            masked = _mask(text, keep, mask)
            return value if masked == text else masked

        return mask_value
    if isinstance(rule, ast.Hash):
        return lambda value, counts: stable_tag(_canonical_text(value))
    if isinstance(rule, ast.Truncate):
        limit = int(rule.length)
        suffix = rule.replacement if rule.replacement is not None else DEFAULT_TRUNCATION

        def truncate(value: Any, counts: Counts) -> Any:
            if isinstance(value, str) and len(value) > limit:
                return value[:limit] + suffix
            if isinstance(value, list) and len(value) > limit:
                return value[:limit]
            return value

        return truncate
    raise TypeError(f"not a value transform: {type(rule).__name__}")


def compile_mutation(rule: ast.MutatorRule, ref: RuleRef, env: CompileEnv) -> CompiledMutation:
    guard = getattr(rule, "guard", None)
    compiled_guard = compile_condition(guard.condition, env) if guard is not None else None
    unless = bool(guard.unless) if guard is not None else False
    path = env.path(rule.path.source)
    if isinstance(rule, ast.SetValue):
        return CompiledMutation(
            ref,
            path,
            compiled_guard,
            unless,
            None,
            rule.path.source,
            compile_operand(rule.value, env),
            True,
        )
    rewrite = pattern_rewrite(rule, env)
    members = descendant_names(path.path.steps)
    if members is not None:
        env.consults_probe = True
    return CompiledMutation(
        ref,
        path,
        compiled_guard,
        unless,
        _value_transform(rule, rewrite),
        rule.path.source,
        rewrite=rewrite,
        writes_strings=rewrite is None and isinstance(rule, ast.Redact | ast.Mask | ast.Hash),
        probe=env.probe_index(rewrite.matcher.probe_regex) if rewrite is not None else None,
        members=members,
        shallow=not any(isinstance(step, Descend) for step in path.path.steps),
    )


def changed_leaves(
    old: Any, new: Any, location: tuple[str | int, ...]
) -> list[tuple[tuple[str | int, ...], Any, Any]]:
    """Where two versions of a subtree differ, leaf by leaf (used only for traces)."""
    if old is new:
        return []
    if isinstance(old, dict) and isinstance(new, dict) and old.keys() == new.keys():
        out = []
        for key in old:
            out += changed_leaves(old[key], new[key], (*location, key))
        return out
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        out = []
        for index, (a, b) in enumerate(zip(old, new, strict=True)):
            out += changed_leaves(a, b, (*location, index))
        return out
    return [] if old == new else [(location, old, new)]


_SCALARS = (int, float, bool, type(None))


def settle_sizes(ctx: EvalContext, resized: list[tuple[Any, str]]) -> None:
    """Add what the changes ``resized`` gathered (`CompiledMutation.updater`) did to the
    payload's size to `ctx.size_delta`, and forget them."""
    if resized and ctx.size_delta is not None:
        ctx.size_delta += growth_of(resized)
    resized.clear()


def _size_change(old: Any, new: Any, delta: int) -> int | None:
    """``delta`` plus what replacing ``old`` by ``new`` adds to the payload's size.

    Only a string taking the place of a string or a scalar is followed (the
    common redaction); anything else returns None, and the output is measured
    again.
    """
    if type(new) is not str or (type(old) is not str and type(old) not in _SCALARS):
        return None
    return delta + json_size(new) - json_size(old)


def _json_equal_fast(a: Any, b: Any) -> bool:
    return a is b or (type(a) is type(b) and a == b)


class RuleGroup(Protocol):
    """Rules run as a unit (see rewrite_groups.py): each changing member and its count.

    ``events`` collects what each member changed, as the member alone would
    record it, so a trace observes the plan that production runs.
    """

    members: list[CompiledMutation]

    def apply(
        self, ctx: EvalContext, pattern_counts: Counts, events: list[RuleEvent] | None
    ) -> list[tuple[CompiledMutation, int]]: ...


def run_mutator(
    name: str,
    mutations: list[CompiledMutation],
    ctx: EvalContext,
    trace: Trace | None,
    started: float,
    plan: list[CompiledMutation | RuleGroup] | None = None,
) -> MutationResult:
    """Apply the rules in order, as ``plan`` (the same rules, some grouped) has them.

    A trace observes the plan: a group reports each member as evaluated and
    the changes its members made, so `--explain` and `policyc test` see the
    evaluation that `serve` and the gateway run. Without a plan (the
    reference, `optimize=False`) the rules run one by one.
    """
    original = ctx.payload
    info_rules: Counts = {}
    info_patterns: Counts = {}
    steps: list[CompiledMutation | RuleGroup] = plan if plan is not None else list(mutations)
    for mutation in steps:
        events: list[RuleEvent] | None = [] if trace is not None else None
        if not isinstance(mutation, CompiledMutation):
            if trace is not None:
                trace.evaluated.extend(member.ref for member in mutation.members)
            for member, count in mutation.apply(ctx, info_patterns, events):
                info_rules[member.ref.code] = info_rules.get(member.ref.code, 0) + count
            if trace is not None and events:
                trace.events.extend(events)
            continue
        if trace is not None:
            trace.evaluated.append(mutation.ref)
        if not mutation.applies(ctx):
            continue
        after, changed = mutation.apply(ctx, info_patterns, events)
        if changed:
            ctx.payload = after
            info_rules[mutation.ref.code] = info_rules.get(mutation.ref.code, 0) + changed
            if trace is not None and events:
                trace.events.extend(events)
    modified = bool(info_rules) and ctx.payload is not original
    info: dict[str, Any] | None = None
    if modified:
        info = {"changes": info_rules}
        if info_patterns:
            info["patterns"] = info_patterns
    return MutationResult(
        interceptor=name,
        phase=ctx.phase,  # type: ignore[arg-type]
        duration_ms=elapsed_ms(started),
        modified=modified,
        payload=ctx.payload,
        info=info,
    )

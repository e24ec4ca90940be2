"""Exact analyses of what a rule can do, run with the lints (`check`, `analyze`, the editor).

Every answer here is a proof, not a sample: numeric intervals, literal sets
and globs against literal sets or other globs (see ``globs.py``). Where a
question cannot be settled exactly (a glob inside another glob with
wildcards on both sides), nothing is reported.

- W301: a rule whose condition is a contradiction (`$.x > 5 and $.x < 3`).
- W304: an active validator whose every `deny` rule can never fire.
- W320: a rule shadowed by an earlier rule of the same validator.
- W321: a mutator change that a later unconditional change always overwrites.
- W322: a deny list (or name test) entirely covered by an allow list.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from ..wire.constants import Phase
from . import ast
from .diagnostics import Code, Diagnostic
from .globs import glob_matches, glob_within, globs_intersect
from .model import PolicySetModel, ResolvedInterceptor
from .path_syntax import Field, Index, PathSyntaxError, parse_path

_FLIP = {">": "<", ">=": "<=", "<": ">", "<=": ">=", "==": "==", "!=": "!="}


def _singular(operand: object) -> str | None:
    """The path source when it names at most one value (no wildcard, filter or `..`)."""
    if not isinstance(operand, ast.PathRef):
        return None
    try:
        steps = parse_path(operand.source).steps
    except PathSyntaxError:
        return None
    for step in steps:
        if isinstance(step, Field) and len(step.names) == 1:
            continue
        if isinstance(step, Index) and len(step.indexes) == 1:
            continue
        return None
    return operand.source


@dataclass
class _Interval:
    low: float = -math.inf
    low_open: bool = True
    high: float = math.inf
    high_open: bool = True

    def clip(self, op: str, value: float) -> None:
        if op in (">", ">="):
            if value > self.low or (value == self.low and op == ">"):
                self.low, self.low_open = value, op == ">"
        elif op in ("<", "<="):
            if value < self.high or (value == self.high and op == "<"):
                self.high, self.high_open = value, op == "<"
        elif op == "==":
            self.clip(">=", value)
            self.clip("<=", value)

    @property
    def empty(self) -> bool:
        if self.low > self.high:
            return True
        return self.low == self.high and (self.low_open or self.high_open)


@dataclass
class _Facts:
    """What an `and` of atoms says about each singular path."""

    intervals: dict[str, _Interval]
    equals: dict[str, set[object]]
    globs: dict[str, list[tuple[str, ...]]]
    members: dict[str, list[tuple[object, ...]]]
    reasons: dict[str, str]


def _atom_facts(facts: _Facts, node: ast.Condition) -> None:
    if isinstance(node, ast.Compare) and node.quantifier is None:
        for ref, other, op in (
            (node.left, node.right, node.op),
            (node.right, node.left, _FLIP[node.op]),
        ):
            path = _singular(ref)
            if path is None or not isinstance(other, ast.Literal_):
                continue
            value = other.value
            if isinstance(value, int | float) and not isinstance(value, bool) and op != "!=":
                facts.intervals.setdefault(path, _Interval()).clip(op, float(value))
            if op == "==" and isinstance(value, str | int | float | bool):
                facts.equals.setdefault(path, set()).add(value)
    elif isinstance(node, ast.Like) and not node.negated and node.quantifier is None:
        path = _singular(node.subject)
        if path is not None and isinstance(node.globs, tuple):
            facts.globs.setdefault(path, []).append(node.globs)
    elif isinstance(node, ast.In) and not node.negated and node.quantifier is None:
        path = _singular(node.subject)
        if path is not None and isinstance(node.container, ast.Literal_):
            values = node.container.value
            if isinstance(values, tuple | list):
                facts.members.setdefault(path, []).append(tuple(values))


def _contradiction(facts: _Facts) -> str | None:
    for path, interval in facts.intervals.items():
        if interval.empty:
            return f"no number satisfies every comparison on `{path}`"
    for path, values in facts.equals.items():
        if len(values) > 1:
            return f"`{path}` cannot equal several different values"
        (value,) = values
        for globs in facts.globs.get(path, []):
            if not isinstance(value, str) or not any(glob_matches(g, value) for g in globs):
                return f"`{path}` == {value!r} is not like {list(globs)}"
        for members in facts.members.get(path, []):
            if value not in members:
                return f"`{path}` == {value!r} is not in {list(members)}"
    for path, groups in facts.globs.items():
        for index, first in enumerate(groups):
            for second in groups[index + 1 :]:
                if not any(globs_intersect(a, b) for a in first for b in second):
                    return f"no string on `{path}` is like both {list(first)} and {list(second)}"
    return None


def unsatisfiable(condition: ast.Condition) -> str | None:
    """Why ``condition`` can never hold, or ``None`` when it may (or it cannot be told)."""
    if isinstance(condition, ast.Or):
        reasons = [unsatisfiable(c) for c in condition.operands]
        return reasons[0] if reasons and all(reasons) else None
    operands = condition.operands if isinstance(condition, ast.And) else (condition,)
    facts = _Facts({}, {}, {}, {}, {})
    for operand in operands:
        if isinstance(operand, ast.And | ast.Or):
            reason = unsatisfiable(operand)
            if reason is not None:
                return reason
        else:
            _atom_facts(facts, operand)
    return _contradiction(facts)


def _rule_unsatisfiable(rule: ast.Rule) -> str | None:
    if isinstance(rule, ast.CheckRule) and not rule.unless:
        return unsatisfiable(rule.condition)
    guard = getattr(rule, "guard", None)
    if isinstance(guard, ast.Guard) and not guard.unless:
        return unsatisfiable(guard.condition)
    return None


def analyze_contradictions(interceptor: ResolvedInterceptor) -> Iterator[Diagnostic]:
    dead_denies = 0
    denies = 0
    for rule in interceptor.rules:
        is_deny = isinstance(rule, ast.ListRule | ast.LimitRule | ast.RateLimit) or (
            isinstance(rule, ast.CheckRule) and rule.severity == "deny"
        )
        denies += is_deny
        reason = _rule_unsatisfiable(rule)
        if reason is None:
            continue
        dead_denies += is_deny
        yield Diagnostic(
            Code.W301,
            "this rule can never fire",
            rule.span,
            f"its condition is a contradiction: {reason}; fix or remove it",
        )
    if (
        interceptor.is_validator
        and interceptor.mode != "audit"
        and denies
        and denies == dead_denies
    ):
        yield Diagnostic(
            Code.W304,
            f"active validator `{interceptor.name}` can never block: every `deny` rule is dead",
            interceptor.node.name_span,
            "each of its `deny` rules has a contradictory condition (see W301)",
        )


def _literal_globs(rule: ast.ListRule) -> tuple[str, ...] | None:
    return rule.globs if isinstance(rule.globs, tuple) else None


def analyze_shadowed(interceptor: ResolvedInterceptor) -> Iterator[Diagnostic]:
    """Later rules that can only block what an earlier rule already blocks."""
    if not interceptor.is_validator:
        return
    seen: list[ast.Rule] = []
    for rule in interceptor.rules:
        for earlier in seen:
            if _covers(earlier, rule):
                yield Diagnostic(
                    Code.W320,
                    f"this rule is shadowed by the rule at line {earlier.span.line}",
                    rule.span,
                    "everything it blocks is already blocked there; remove it or merge the two",
                )
                break
        seen.append(rule)


def _covers(earlier: ast.Rule, later: ast.Rule) -> bool:
    if isinstance(earlier, ast.ListRule) and isinstance(later, ast.ListRule):
        if earlier.effect != "deny" or later.effect != "deny" or earlier.subject != later.subject:
            return False
        outer, inner = _literal_globs(earlier), _literal_globs(later)
        if outer is None or inner is None:
            return False
        return all(any(glob_within(i, o) is True for o in outer) for i in inner)
    if isinstance(earlier, ast.CheckRule) and isinstance(later, ast.CheckRule):
        return (
            earlier.severity == later.severity == "deny"
            and earlier.unless == later.unless
            and earlier.condition == later.condition
        )
    return False


def _overwrites(rule: ast.Rule, path: str) -> bool:
    """An unconditional `set` of a literal, or `remove`, of exactly ``path``."""
    if isinstance(rule, ast.Remove):
        return rule.guard is None and rule.path.source == path
    if isinstance(rule, ast.SetValue):
        return (
            rule.guard is None and isinstance(rule.value, ast.Literal_) and rule.path.source == path
        )
    return False


def analyze_overwritten(model: PolicySetModel) -> Iterator[Diagnostic]:
    """A change to a path that a later unconditional `set` or `remove` always replaces."""
    mutators = [i for i in model.interceptors if not i.is_validator and i.mode != "audit"]
    for mutator in mutators:
        for index, rule in enumerate(mutator.rules):
            if not isinstance(rule, ast.MUTATOR_RULES):
                continue
            path = rule.path.source
            later = next((r for r in mutator.rules[index + 1 :] if _overwrites(r, path)), None)
            if later is not None:
                yield Diagnostic(
                    Code.W321,
                    f"this change to `{path}` is always overwritten by line {later.span.line}",
                    rule.span,
                    "the later rule replaces the path unconditionally; remove one of them",
                )
                continue
            overwriter = _later_mutator_overwrite(mutator, path, mutators)
            if overwriter is not None:
                yield Diagnostic(
                    Code.W321,
                    f"this change to `{path}` is always overwritten by `{overwriter.name}`",
                    rule.span,
                    f"`{overwriter.name}` runs later on every message this one sees and "
                    "replaces the path unconditionally",
                )


def _later_mutator_overwrite(
    mutator: ResolvedInterceptor, path: str, mutators: list[ResolvedInterceptor]
) -> ResolvedInterceptor | None:
    hooks = mutator.hooked()
    for other in mutators:
        if other is mutator:
            continue
        if not any(_overwrites(r, path) for r in other.rules):
            continue
        other_hooks = set(other.hooked())
        runs_later = all(
            (event, phase) in other_hooks
            and (other.priorities[phase], other.name) > (mutator.priorities[phase], mutator.name)
            for event, phase in hooks
        )
        if hooks and runs_later:
            return other
    return None


def analyze_allow_cover(model: PolicySetModel) -> Iterator[Diagnostic]:
    """Deny lists that only name tools an allow list on the same hooks already refuses."""
    validators = [i for i in model.interceptors if i.is_validator and i.mode != "audit"]
    allows: list[tuple[ResolvedInterceptor, ast.ListRule, tuple[str, ...]]] = []
    for validator in validators:
        for rule in validator.rules:
            if isinstance(rule, ast.ListRule) and rule.effect == "allow":
                globs = _literal_globs(rule)
                if globs is not None:
                    allows.append((validator, rule, globs))
    for validator in validators:
        hooks = set(validator.hooked())
        for rule in validator.rules:
            if isinstance(rule, ast.CheckRule):
                yield from _check_rule_covered(rule, validator, hooks, allows)
                continue
            if not isinstance(rule, ast.ListRule) or rule.effect != "deny":
                continue
            denied = _literal_globs(rule)
            if not denied:
                continue
            for owner, allow, allowed in allows:
                if allow.subject != rule.subject or not hooks <= set(owner.hooked()):
                    continue
                if not any(globs_intersect(d, a) for d in denied for a in allowed):
                    where = "" if owner is validator else f" of `{owner.name}`"
                    yield Diagnostic(
                        Code.W322,
                        f"this deny list is covered by the allow list at line {allow.span.line}"
                        f"{where}",
                        rule.span,
                        "every name it denies is already outside the allow list; remove it, "
                        "or it documents intent only",
                    )
                    break


def _tool_names(rule: ast.CheckRule) -> tuple[str, ...] | None:
    """The globs a rule needs `$.name` to match to fire (a literal is a glob too), if any."""
    if rule.unless:
        return None
    condition = rule.condition
    operands = condition.operands if isinstance(condition, ast.And) else (condition,)
    facts = _Facts({}, {}, {}, {}, {})
    for operand in operands:
        if not isinstance(operand, ast.And | ast.Or):
            _atom_facts(facts, operand)
    literal = facts.equals.get("$.name")
    if literal and all(isinstance(v, str) for v in literal):
        return tuple(str(v) for v in literal)
    globs = facts.globs.get("$.name")
    return globs[0] if globs else None


def _check_rule_covered(
    rule: ast.CheckRule,
    validator: ResolvedInterceptor,
    hooks: set[tuple[str, Phase]],
    allows: list[tuple[ResolvedInterceptor, ast.ListRule, tuple[str, ...]]],
) -> Iterator[Diagnostic]:
    """A rule on `$.name` whose every name is a tool the allow list already refuses."""
    names = _tool_names(rule)
    if not names or "*" in names:
        return
    for owner, allow, allowed in allows:
        if allow.subject != "tools" or not hooks <= set(owner.hooked()):
            continue
        if not any(globs_intersect(n, a) for n in names for a in allowed):
            where = "" if owner is validator else f" of `{owner.name}`"
            yield Diagnostic(
                Code.W322,
                f"this rule only fires for tools the allow list at line {allow.span.line}"
                f"{where} already refuses",
                rule.span,
                "no tool it can fire for is on the allow list; widen the list or remove the rule",
            )
            return


def analyze(model: PolicySetModel) -> Iterator[Diagnostic]:
    for interceptor in model.interceptors:
        yield from analyze_contradictions(interceptor)
        yield from analyze_shadowed(interceptor)
    yield from analyze_overwritten(model)
    yield from analyze_allow_cover(model)

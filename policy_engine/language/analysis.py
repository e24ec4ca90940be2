"""Exact analyses of what a rule can do, run with the lints (`check`, `analyze`, the editor).

Every answer here is a proof, not a sample: numeric intervals, literal sets
and globs against literal sets or other globs (see ``globs.py``). Where a
question cannot be settled exactly (a glob inside another glob with
wildcards on both sides), nothing is reported.

Policy files are untrusted, so no analysis may cost more than a budget:
shadowing looks rules up by hash and by literal glob head instead of
comparing every pair, and each glob question is charged to one
budget per policy set (``SourceLimits.max_analysis_steps``). A question that runs past its
budget ends in W323 on the rule it was asking about: never a silent pass.

- W301: a rule whose condition is a contradiction (`$.x > 5 and $.x < 3`).
- W304: an active validator whose every `deny` rule can never fire.
- W320: a rule shadowed by an earlier rule of the same validator.
- W321: a mutator change that a later unconditional change always overwrites.
- W322: a deny list (or name test) entirely covered by an allow list.
- W323: an analysis stopped at its budget, so some of the above were not checked.
- W315: a rule that can fire, but not while its params keep their defaults
  (`deny if $.n > param.cap and $.n < 5` with `cap = 10`): a caller may pass
  other values through `config`, so this is its own warning, not W301. An
  empty list default (`param blocked: list[string] = []`) is the usual "none
  configured" and is not reported.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..wire.constants import Phase
from . import ast
from .codes import Code
from .diagnostics import Diagnostic, Span
from .globs import glob_matches_bounded, glob_within, globs_intersect, literal_head
from .model import PolicySetModel, ResolvedInterceptor, ResolvedParam
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


class _Undecided(Exception):
    """An analysis question could not be answered within its budget."""

    def __init__(self, why: str, *, exhausted: bool) -> None:
        super().__init__(why)
        self.why = why
        self.exhausted = exhausted


@dataclass
class _Budget:
    """What is left of the comparisons one policy set's analyses may make."""

    steps: int
    left: int = 0

    def __post_init__(self) -> None:
        self.left = self.steps

    def spend(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise _Undecided(
                f"the policy set needs more than {self.steps} comparisons",
                exhausted=True,
            )

    def intersect(self, a: str, b: str) -> bool:
        self.spend()
        answer = globs_intersect(a, b)
        if answer is None:
            raise _Undecided("two of its globs are too long to compare", exhausted=False)
        return answer

    def matches(self, glob: str, text: str) -> bool:
        self.spend()
        answer = glob_matches_bounded(glob, text)
        if answer is None:
            raise _Undecided("a glob and a value are too long to compare", exhausted=False)
        return answer


def _undecided(stop: _Undecided, span: Span, checks: str) -> Diagnostic:
    if stop.exhausted:
        rest = " for this and every later rule"
        fix = "merge or split the rules, or raise `--max-analysis-steps`"
    else:
        rest = ""
        fix = "shorten or split the globs"
    return Diagnostic(
        Code.W323,
        f"analysis stopped: {checks} not checked{rest}",
        span,
        f"{stop.why}; {fix}, or acknowledge this warning if the rules are as intended",
    )


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


def _contradiction(facts: _Facts, budget: _Budget) -> str | None:
    for path, interval in facts.intervals.items():
        if interval.empty:
            return f"no number satisfies every comparison on `{path}`"
    for path, values in facts.equals.items():
        if len(values) > 1:
            return f"`{path}` cannot equal several different values"
        (value,) = values
        for globs in facts.globs.get(path, []):
            if not isinstance(value, str) or not any(budget.matches(g, value) for g in globs):
                return f"`{path}` == {value!r} is not like {list(globs)}"
        for members in facts.members.get(path, []):
            if value not in members:
                return f"`{path}` == {value!r} is not in {list(members)}"
    for path, groups in facts.globs.items():
        for index, first in enumerate(groups):
            for second in groups[index + 1 :]:
                if not any(budget.intersect(a, b) for a in first for b in second):
                    return f"no string on `{path}` is like both {list(first)} and {list(second)}"
    return None


def _plain(value: Any) -> Any:
    """A param default as a literal holds it: lists as tuples, so nodes stay hashable."""
    return tuple(_plain(v) for v in value) if isinstance(value, list | tuple) else value


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _literal_false(node: ast.Condition, defaults: set[int]) -> str | None:
    """Why a comparison of a param's default (``defaults``: the ids of the literals that
    stand for params) with a literal is false, if it is; constants are W301's (lints.py)."""
    if not isinstance(node, ast.Compare) or node.quantifier is not None:
        return None
    left, right = node.left, node.right
    if not isinstance(left, ast.Literal_) or not isinstance(right, ast.Literal_):
        return None
    if id(left) not in defaults and id(right) not in defaults:
        return None
    a, b = left.value, right.value
    if node.op in ("==", "!="):
        same = (type(a) is type(b) and a == b) or (_is_number(a) and _is_number(b) and a == b)
        holds = same if node.op == "==" else not same
    elif _is_number(a) and _is_number(b):
        holds = {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[node.op]
    else:
        return None
    return None if holds else f"`{_shown(a)} {node.op} {_shown(b)}` is false"


def unsatisfiable(
    condition: ast.Condition, budget: _Budget, defaults: set[int] | None = None
) -> str | None:
    """Why ``condition`` can never hold, or ``None`` when it may; raises ``_Undecided``.

    ``defaults``: the ids of literals that stand for params' defaults (W315).
    """
    if isinstance(condition, ast.Or):
        reasons = [unsatisfiable(c, budget, defaults) for c in condition.operands]
        return reasons[0] if reasons and all(reasons) else None
    operands = condition.operands if isinstance(condition, ast.And) else (condition,)
    facts = _Facts({}, {}, {}, {}, {})
    for operand in operands:
        if isinstance(operand, ast.And | ast.Or):
            reason = unsatisfiable(operand, budget, defaults)
            if reason is not None:
                return reason
        else:
            reason = _literal_false(operand, defaults) if defaults else None
            if reason is not None:
                return reason
            _atom_facts(facts, operand)
    return _contradiction(facts, budget)


def _with_defaults(
    node: Any, params: Mapping[str, ResolvedParam], used: dict[str, Any], made: set[int]
) -> Any:
    """``node`` with each `param.NAME` that has a default replaced by that default.

    ``used`` collects the params replaced, by name, with their defaults, and
    ``made`` the ids of the literals that stand for them.
    """
    if isinstance(node, ast.ParamRef):
        param = params.get(node.name)
        if param is None or param.required:
            return node
        used[node.name] = param.default
        literal = ast.Literal_(_plain(param.default), span=node.span)
        made.add(id(literal))
        return literal
    if isinstance(node, ast.Like) and isinstance(node.globs, ast.ParamRef):
        param = params.get(node.globs.name)
        if param is not None and not param.required:
            used[node.globs.name] = param.default
            default = param.default
            globs = tuple(default) if isinstance(default, list | tuple) else (str(default),)
            node = dataclasses.replace(node, globs=globs)
    if isinstance(node, tuple):
        items = tuple(_with_defaults(item, params, used, made) for item in node)
        return node if all(a is b for a, b in zip(items, node, strict=True)) else items
    if not dataclasses.is_dataclass(node) or isinstance(node, type):
        return node
    changes = {}
    for item in dataclasses.fields(node):
        value = getattr(node, item.name)
        if isinstance(value, tuple) or dataclasses.is_dataclass(value):
            new = _with_defaults(value, params, used, made)
            if new is not value:
                changes[item.name] = new
    return dataclasses.replace(node, **changes) if changes else node


def _param_dead(
    rule: ast.Rule, interceptor: ResolvedInterceptor, budget: _Budget
) -> tuple[str, dict[str, Any]] | None:
    """Why ``rule`` cannot fire once its params take their defaults, and those params."""
    if isinstance(rule, ast.CheckRule) and not rule.unless:
        condition = rule.condition
    else:
        guard = getattr(rule, "guard", None)
        if not isinstance(guard, ast.Guard) or guard.unless:
            return None
        condition = guard.condition
    used: dict[str, Any] = {}
    made: set[int] = set()
    fixed = _with_defaults(condition, interceptor.params, used, made)
    if not used:
        return None
    reason = unsatisfiable(fixed, budget, made)
    return None if reason is None else (reason, used)


def _param_warning(rule: ast.Rule, reason: str, used: dict[str, Any]) -> Diagnostic:
    values = ", ".join(f"`param.{name}` = {_shown(value)}" for name, value in sorted(used.items()))
    names = ", ".join(sorted(used))
    return Diagnostic(
        Code.W315,
        f"this rule cannot fire while {values} (the default{'s' if len(used) > 1 else ''})",
        rule.span,
        f"with that value its condition is a contradiction: {reason}; change the default of "
        f"`{names}` to one the rule is meant for, or remove the rule if no caller sets "
        f"`{names}` through `config`",
    )


def _shown(value: Any) -> str:
    """A default as it is written in a policy (`false`, `["a"]`, `10`)."""
    return json.dumps(value, ensure_ascii=False)


def _rule_unsatisfiable(rule: ast.Rule, budget: _Budget) -> str | None:
    if isinstance(rule, ast.CheckRule) and not rule.unless:
        return unsatisfiable(rule.condition, budget)
    guard = getattr(rule, "guard", None)
    if isinstance(guard, ast.Guard) and not guard.unless:
        return unsatisfiable(guard.condition, budget)
    return None


def analyze_contradictions(
    interceptor: ResolvedInterceptor, budget: _Budget
) -> Iterator[Diagnostic]:
    dead_denies = 0
    denies = 0
    undecided = False
    for rule in interceptor.rules:
        is_deny = isinstance(rule, ast.ListRule | ast.LimitRule | ast.RateLimit) or (
            isinstance(rule, ast.CheckRule) and rule.severity == "deny"
        )
        denies += is_deny
        try:
            reason = _rule_unsatisfiable(rule, budget)
        except _Undecided as stop:
            yield _undecided(stop, rule.span, "whether it can fire (W301, W304) was")
            if stop.exhausted:
                return
            undecided = True  # W304 is no proof once one rule went unchecked
            continue
        if reason is None:
            try:
                dead = _param_dead(rule, interceptor, budget)
            except _Undecided as stop:
                yield _undecided(stop, rule.span, "whether its params let it fire (W315) was")
                if stop.exhausted:
                    return
                continue
            if dead is not None:
                yield _param_warning(rule, *dead)
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
        and not undecided
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


def analyze_shadowed(interceptor: ResolvedInterceptor, budget: _Budget) -> Iterator[Diagnostic]:
    """Later rules that can only block what an earlier rule already blocks."""
    if not interceptor.is_validator:
        return
    seen = _SeenRules()
    for rule in interceptor.rules:
        try:
            earlier = seen.covering(rule, budget)
        except _Undecided as stop:
            yield _undecided(stop, rule.span, "whether it is shadowed (W320) was")
            if stop.exhausted:
                return
            earlier = None
        if earlier is not None:
            yield Diagnostic(
                Code.W320,
                f"this rule is shadowed by the rule at line {earlier.span.line}",
                rule.span,
                "everything it blocks is already blocked there; remove it or merge the two",
            )
        seen.add(rule)


class _SeenRules:
    """Earlier rules, indexed so a later one finds what covers it without a scan.

    Identical `deny if` rules are found by hash. A glob can only lie within an
    outer glob whose literal head (the run before any wildcard) starts its own
    head (see ``glob_within``), so deny lists are filed under each glob's head.
    """

    def __init__(self) -> None:
        self.order: dict[int, int] = {}
        self.checks: dict[object, ast.CheckRule] = {}
        self.unhashable: list[ast.CheckRule] = []
        self.heads: dict[tuple[str, str], list[tuple[str, ast.ListRule]]] = {}
        self.head_lengths: set[int] = set()
        self.first_list: dict[str, ast.ListRule] = {}

    def add(self, rule: ast.Rule) -> None:
        self.order.setdefault(id(rule), len(self.order))
        if isinstance(rule, ast.CheckRule) and rule.severity == "deny":
            try:
                self.checks.setdefault((rule.unless, rule.condition), rule)
            except TypeError:
                self.unhashable.append(rule)
        elif isinstance(rule, ast.ListRule) and rule.effect == "deny":
            if _literal_globs(rule) is not None:
                self.first_list.setdefault(rule.subject, rule)
            for glob in _literal_globs(rule) or ():
                head = literal_head(glob)
                self.heads.setdefault((rule.subject, head), []).append((glob, rule))
                self.head_lengths.add(len(head))

    def covering(self, rule: ast.Rule, budget: _Budget) -> ast.Rule | None:
        if isinstance(rule, ast.CheckRule) and rule.severity == "deny":
            return self._same_check(rule, budget)
        if isinstance(rule, ast.ListRule) and rule.effect == "deny":
            return self._covering_list(rule, budget)
        return None

    def _same_check(self, rule: ast.CheckRule, budget: _Budget) -> ast.Rule | None:
        try:
            found = self.checks.get((rule.unless, rule.condition))
        except TypeError:
            found = None
        for other in self.unhashable:
            budget.spend()
            if other.unless == rule.unless and other.condition == rule.condition:
                found = other if found is None else min(found, other, key=self._rank)
        return found

    def _covering_list(self, rule: ast.ListRule, budget: _Budget) -> ast.Rule | None:
        inner = _literal_globs(rule)
        if inner is None:
            return None
        if not inner:
            return self.first_list.get(rule.subject)
        common: set[int] | None = None
        rules: dict[int, ast.ListRule] = {}
        for glob in inner:
            head = literal_head(glob)
            covers: set[int] = set()
            for length in self.head_lengths:
                if length > len(head):
                    continue
                for outer, owner in self.heads.get((rule.subject, head[:length]), ()):
                    budget.spend()
                    if glob_within(glob, outer) is True:
                        covers.add(self._rank(owner))
                        rules[self._rank(owner)] = owner
            common = covers if common is None else common & covers
            if not common:
                return None
        return rules[min(common)] if common else None

    def _rank(self, rule: ast.Rule) -> int:
        return self.order[id(rule)]


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
    """A change to a path that a later unconditional `set` or `remove` always replaces.

    Linear: each mutator's overwritten paths are collected once, and a
    backward pass finds the next overwrite of each path.
    """
    mutators = [i for i in model.interceptors if not i.is_validator and i.mode != "audit"]
    overwritten = {
        id(m): {p for r in m.rules if (p := _overwritten_path(r)) is not None} for m in mutators
    }
    for mutator in mutators:
        next_overwrite: dict[str, ast.Rule] = {}
        later_of: list[ast.Rule | None] = []
        for rule in reversed(mutator.rules):
            path = rule.path.source if isinstance(rule, ast.MUTATOR_RULES) else None
            later_of.append(next_overwrite.get(path) if path is not None else None)
            written = _overwritten_path(rule)
            if written is not None:
                next_overwrite[written] = rule
        later_of.reverse()
        for rule, later in zip(mutator.rules, later_of, strict=True):
            if not isinstance(rule, ast.MUTATOR_RULES):
                continue
            path = rule.path.source
            if later is not None:
                yield Diagnostic(
                    Code.W321,
                    f"this change to `{path}` is always overwritten by line {later.span.line}",
                    rule.span,
                    "the later rule replaces the path unconditionally; remove one of them",
                )
                continue
            overwriter = _later_mutator_overwrite(mutator, path, mutators, overwritten)
            if overwriter is not None:
                yield Diagnostic(
                    Code.W321,
                    f"this change to `{path}` is always overwritten by `{overwriter.name}`",
                    rule.span,
                    f"`{overwriter.name}` runs later on every message this one sees and "
                    "replaces the path unconditionally",
                )


def _overwritten_path(rule: ast.Rule) -> str | None:
    """The path ``rule`` always replaces (see ``_overwrites``), if any."""
    if isinstance(rule, ast.Remove | ast.SetValue) and _overwrites(rule, rule.path.source):
        return rule.path.source
    return None


def _later_mutator_overwrite(
    mutator: ResolvedInterceptor,
    path: str,
    mutators: list[ResolvedInterceptor],
    overwritten: dict[int, set[str]],
) -> ResolvedInterceptor | None:
    hooks = mutator.hooked()
    for other in mutators:
        if other is mutator:
            continue
        if path not in overwritten[id(other)]:
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


def analyze_allow_cover(model: PolicySetModel, budget: _Budget) -> Iterator[Diagnostic]:
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
            try:
                found = list(_rule_covered(rule, validator, hooks, allows, budget))
            except _Undecided as stop:
                yield _undecided(stop, rule.span, "whether an allow list covers it (W322) was")
                if stop.exhausted:
                    return
                continue
            yield from found


def _rule_covered(
    rule: ast.Rule,
    validator: ResolvedInterceptor,
    hooks: set[tuple[str, Phase]],
    allows: list[tuple[ResolvedInterceptor, ast.ListRule, tuple[str, ...]]],
    budget: _Budget,
) -> Iterator[Diagnostic]:
    if isinstance(rule, ast.CheckRule):
        yield from _check_rule_covered(rule, validator, hooks, allows, budget)
        return
    if not isinstance(rule, ast.ListRule) or rule.effect != "deny":
        return
    denied = _literal_globs(rule)
    if not denied:
        return
    for owner, allow, allowed in allows:
        if allow.subject != rule.subject or not hooks <= set(owner.hooked()):
            continue
        if not any(budget.intersect(d, a) for d in denied for a in allowed):
            where = "" if owner is validator else f" of `{owner.name}`"
            yield Diagnostic(
                Code.W322,
                f"this deny list is covered by the allow list at line {allow.span.line}{where}",
                rule.span,
                "every name it denies is already outside the allow list; remove it, "
                "or it documents intent only",
            )
            return


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
    budget: _Budget,
) -> Iterator[Diagnostic]:
    """A rule on `$.name` whose every name is a tool the allow list already refuses."""
    names = _tool_names(rule)
    if not names or "*" in names:
        return
    for owner, allow, allowed in allows:
        if allow.subject != "tools" or not hooks <= set(owner.hooked()):
            continue
        if not any(budget.intersect(n, a) for n in names for a in allowed):
            where = "" if owner is validator else f" of `{owner.name}`"
            yield Diagnostic(
                Code.W322,
                f"this rule only fires for tools the allow list at line {allow.span.line}"
                f"{where} already refuses",
                rule.span,
                "no tool it can fire for is on the allow list; widen the list or remove the rule",
            )
            return


def analyze(model: PolicySetModel, max_steps: int) -> Iterator[Diagnostic]:
    """Every analysis, all sharing one budget of ``max_steps`` comparisons."""
    budget = _Budget(max_steps)
    for interceptor in model.interceptors:
        yield from analyze_contradictions(interceptor, budget)
        yield from analyze_shadowed(interceptor, budget)
    yield from analyze_overwritten(model)
    yield from analyze_allow_cover(model, budget)

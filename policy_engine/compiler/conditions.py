"""Conditions compiled into closures over an evaluation context.

An operand evaluates to candidates: (value, location) pairs, several for a
JSONPath that selects several values, none when it selects nothing. A
condition returns a *witness* when it holds (the location that made it true,
possibly empty) and None when it does not, so a rule that fires can name the
offending field without a second pass. Unquantified predicates mean "any".
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..language import ast
from ..language.model import ResolvedPattern
from ..language.path_syntax import parse_path
from .jsonpath import CompiledPath, compile_path
from .match_groups import GroupIndex, MatchGroup, pattern_key
from .matchers import GlobMatcher, TextMatcher, pattern_specs

Location = tuple[str | int, ...]
Candidate = tuple[Any, Location]
NO_LOCATION: Location = ()


@dataclass
class EvalContext:
    payload: Any
    event: str
    phase: str
    params: dict[str, Any]
    context: dict[str, Any]
    # Per-invoke scan results shared by the `matches` rules of a group.
    memo: dict[int, Any] = field(default_factory=dict)
    # How much a mutator changed the payload's bounds estimate (see bounds.py);
    # None once a change is not a string for a string or a scalar.
    size_delta: int | None = 0


OperandFn = Callable[[EvalContext], list[Candidate]]
ConditionFn = Callable[[EvalContext], Location | None]


@dataclass
class CompileEnv:
    """What compiling a condition needs: patterns and a cache of compiled paths."""

    patterns: dict[str, ResolvedPattern]
    paths: dict[str, CompiledPath]
    groups: GroupIndex = field(default_factory=dict)

    def path(self, source: str) -> CompiledPath:
        compiled = self.paths.get(source)
        if compiled is None:
            compiled = compile_path(parse_path(source))
            self.paths[source] = compiled
        return compiled


# ------------------------------------------------------------------ values


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "int" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    return "object"


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: `true` is not `1`, and lists compare element-wise by the same rule."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return (
        bool(a == b)
        and type(a) in (int, float, str, type(None))
        and (isinstance(b, int | float) if isinstance(a, int | float) else type(a) is type(b))
    )


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def json_size(value: Any) -> int:
    """Bytes of the compact JSON encoding, the size a limit talks about."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return len(text.encode("utf-8", "surrogatepass"))


def json_value(value: Any) -> Any:
    """A literal as JSON data: the AST keeps lists as tuples (hashable nodes)."""
    if isinstance(value, tuple | list):
        return [json_value(v) for v in value]
    return value


# ---------------------------------------------------------------- operands


def compile_operand(node: ast.Operand, env: CompileEnv) -> OperandFn:
    if isinstance(node, ast.PathRef):
        path = env.path(node.source)
        return lambda ctx: path.find(ctx.payload)
    if isinstance(node, ast.Literal_):
        single = [(json_value(node.value), NO_LOCATION)]
        return lambda ctx: single
    if isinstance(node, ast.EventRef):
        return lambda ctx: [(ctx.event, NO_LOCATION)]
    if isinstance(node, ast.PhaseRef):
        return lambda ctx: [(ctx.phase, NO_LOCATION)]
    if isinstance(node, ast.ParamRef):
        name = node.name
        return lambda ctx: [(ctx.params[name], NO_LOCATION)] if name in ctx.params else []
    if isinstance(node, ast.ContextRef):
        return _context_operand(node.parts)
    return _call_operand(node, env)


def _context_operand(parts: Sequence[str]) -> OperandFn:
    def read(ctx: EvalContext) -> list[Candidate]:
        value: Any = ctx.context
        for part in parts:
            if not isinstance(value, dict) or part not in value:
                return []
            value = value[part]
        return [(value, NO_LOCATION)]

    return read


def _length(value: Any) -> Any:
    return len(value) if isinstance(value, str | list | dict) else None


def _call_operand(node: ast.Call, env: CompileEnv) -> OperandFn:
    argument = compile_operand(node.argument, env)
    if node.function == "count":
        return lambda ctx: [(len(argument(ctx)), NO_LOCATION)]
    mapping: Callable[[Any], Any]
    if node.function == "length":
        mapping = _length
    elif node.function == "size":
        mapping = json_size
    elif node.function == "lower":
        mapping = lambda v: v.lower() if isinstance(v, str) else None  # noqa: E731
    else:
        mapping = lambda v: v.upper() if isinstance(v, str) else None  # noqa: E731

    def apply(ctx: EvalContext) -> list[Candidate]:
        out = []
        for value, location in argument(ctx):
            mapped = mapping(value)
            if mapped is not None:
                out.append((mapped, location))
        return out

    return apply


# -------------------------------------------------------------- predicates


def _quantified(
    subject: OperandFn, quantifier: ast.Quantifier, test: Callable[[Any, EvalContext], bool]
) -> ConditionFn:
    """Apply ``test`` to every candidate: any (default) or all (true when there are none)."""
    if quantifier == "all":

        def every(ctx: EvalContext) -> Location | None:
            candidates = subject(ctx)
            for value, _ in candidates:
                if not test(value, ctx):
                    return None
            return candidates[0][1] if candidates else NO_LOCATION

        return every

    def some(ctx: EvalContext) -> Location | None:
        for value, location in subject(ctx):
            if test(value, ctx):
                return location
        return None

    return some


def _compare(op: str, left: Any, right: Any) -> bool:
    if op == "==":
        return json_equal(left, right)
    if op == "!=":
        return not json_equal(left, right)
    if not (is_number(left) and is_number(right)):
        return False
    if op == "<":
        return bool(left < right)
    if op == "<=":
        return bool(left <= right)
    if op == ">":
        return bool(left > right)
    return bool(left >= right)


def _first(operand: OperandFn, ctx: EvalContext) -> tuple[bool, Any]:
    values = operand(ctx)
    return (True, values[0][0]) if values else (False, None)


def compile_condition(node: ast.Condition, env: CompileEnv) -> ConditionFn:
    if isinstance(node, ast.Constant):
        result = NO_LOCATION if node.value else None
        return lambda ctx: result
    if isinstance(node, ast.Not):
        inner = compile_condition(node.operand, env)
        return lambda ctx: NO_LOCATION if inner(ctx) is None else None
    if isinstance(node, ast.And):
        parts = [compile_condition(c, env) for c in node.operands]

        def conjunction(ctx: EvalContext) -> Location | None:
            witness: Location = NO_LOCATION
            for part in parts:
                found = part(ctx)
                if found is None:
                    return None
                witness = witness or found
            return witness

        return conjunction
    if isinstance(node, ast.Or):
        alternatives = [compile_condition(c, env) for c in node.operands]

        def disjunction(ctx: EvalContext) -> Location | None:
            for alternative in alternatives:
                found = alternative(ctx)
                if found is not None:
                    return found
            return None

        return disjunction
    if isinstance(node, ast.Exists):
        path = env.path(node.path.source)
        if node.negated:
            return lambda ctx: None if path.find(ctx.payload) else NO_LOCATION

        def present(ctx: EvalContext) -> Location | None:
            found = path.find(ctx.payload)
            return found[0][1] if found else None

        return present
    return _compile_predicate(node, env)


def _compile_predicate(node: ast.Condition, env: CompileEnv) -> ConditionFn:
    if isinstance(node, ast.Compare):
        right = compile_operand(node.right, env)
        op = node.op

        def compare(value: Any, ctx: EvalContext) -> bool:
            found, other = _first(right, ctx)
            return found and _compare(op, value, other)

        return _quantified(compile_operand(node.left, env), node.quantifier, compare)
    if isinstance(node, ast.Matches):
        if isinstance(node.subject, ast.PathRef):
            grouped = env.groups.get((node.subject.source, pattern_key(node.pattern)))
            if grouped is not None:
                return _grouped_matches(*grouped, node.quantifier)
        matcher = TextMatcher(pattern_specs([node.pattern], env.patterns))
        return _quantified(
            compile_operand(node.subject, env),
            node.quantifier,
            lambda value, ctx: isinstance(value, str) and matcher.search(value),
        )
    if isinstance(node, ast.Like):
        test = _like_test(node)
        if node.negated:
            matches = test
            test = lambda value, ctx: not matches(value, ctx)  # noqa: E731
        return _quantified(compile_operand(node.subject, env), node.quantifier, test)
    if isinstance(node, ast.In):
        container = compile_operand(node.container, env)
        negated = node.negated

        def member(value: Any, ctx: EvalContext) -> bool:
            found, items = _first(container, ctx)
            inside = (
                found
                and isinstance(items, list | tuple)
                and any(json_equal(value, item) for item in items)
            )
            return not inside if negated else inside

        return _quantified(compile_operand(node.subject, env), node.quantifier, member)
    assert isinstance(node, ast.IsType)
    wanted = node.type_name

    def has_type(value: Any, ctx: EvalContext) -> bool:
        actual = json_type(value)
        return actual == wanted or (wanted == "number" and actual == "int")

    return _quantified(compile_operand(node.subject, env), node.quantifier, has_type)


def _grouped_matches(group: MatchGroup, index: int, quantifier: ast.Quantifier) -> ConditionFn:
    """`matches` answered from the group's shared scan (see match_groups.py)."""
    if quantifier == "all":

        def every(ctx: EvalContext) -> Location | None:
            scanned = group.scan(ctx.payload, ctx.memo)
            if any(index not in hits for _, _, hits in scanned):
                return None
            return scanned[0][1] if scanned else NO_LOCATION

        return every

    def some(ctx: EvalContext) -> Location | None:
        for _, location, hits in group.scan(ctx.payload, ctx.memo):
            if index in hits:
                return location
        return None

    return some


def _like_test(node: ast.Like) -> Callable[[Any, EvalContext], bool]:
    if isinstance(node.globs, tuple):
        matcher = GlobMatcher(node.globs)
        return lambda value, ctx: isinstance(value, str) and matcher.matches(value)
    name = node.globs.name
    cache: dict[tuple[str, ...], GlobMatcher] = {}

    def by_param(value: Any, ctx: EvalContext) -> bool:
        globs = ctx.params.get(name)
        key = (
            tuple(globs) if isinstance(globs, list) else (globs,) if isinstance(globs, str) else ()
        )
        matcher = cache.get(key)
        if matcher is None:
            matcher = cache[key] = GlobMatcher(key)
        return isinstance(value, str) and matcher.matches(value)

    return by_param

"""Static types where they are known, and rules in the wrong kind of block.

Operands read from the payload have no static type; literals, params,
function results, `event` and `phase` do. Only certain mismatches are reported.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from typing import cast

from ..wire.events import event_matches
from ..wire.suggest import did_you_mean
from . import ast
from .check_events import check_event_name
from .check_limits import MAX_CALLS, check_rate_limit
from .check_paths import parse_checked
from .diagnostics import Code, Diagnostic, Span
from .formatter import render_condition
from .model import ResolvedInterceptor
from .path_steps import Descend, Filter, PathSyntaxError, Slice, Wildcard
from .path_syntax import filter_conditions, parse_path
from .sugar_events import LIST_EVENTS
from .walk import find

StaticType = str | None  # "string", "number", "bool", "null", "list", or None (unknown)


def literal_type(value: object) -> StaticType:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, tuple | list):
        return "list"
    return None


def operand_type(operand: ast.Operand, interceptor: ResolvedInterceptor) -> StaticType:
    if isinstance(operand, ast.Literal_):
        return literal_type(operand.value)
    if isinstance(operand, ast.EventRef | ast.PhaseRef):
        return "string"
    if isinstance(operand, ast.ParamRef):
        param = interceptor.params.get(operand.name)
        if param is None:
            return None
        if param.type.is_list:
            return "list"
        return {"int": "number", "number": "number", "string": "string", "bool": "bool"}[
            param.type.base
        ]
    if isinstance(operand, ast.Call):
        return "number" if operand.function in _NUMBER_FUNCTIONS else "string"
    return None


_NUMBER_FUNCTIONS = ("length", "size", "count")
_STRING_FUNCTIONS = ("lower", "upper", "url_decode", "normalize", "host", "scheme", "path")


def _mismatch(message: str, span: Span, help: str | None = None) -> Diagnostic:
    return Diagnostic(Code.E204, message, span, help)


def check_condition_types(
    condition: ast.Condition, interceptor: ResolvedInterceptor
) -> Iterator[Diagnostic]:
    for cmp in find(condition, ast.Compare):
        left, right = operand_type(cmp.left, interceptor), operand_type(cmp.right, interceptor)
        if left and right and left != right and "null" not in (left, right):
            yield _mismatch(
                f"cannot compare a {left} with a {right}",
                cmp.span,
                _compare_help(cmp, left, right),
            )
            continue
        ordered = cmp.op in ("<", "<=", ">", ">=")
        for side, operand in ((left, cmp.left), (right, cmp.right)):
            if ordered and side in ("bool", "list", "null", "string"):
                yield _mismatch(
                    f"`{cmp.op}` compares numbers, not a {side}",
                    cmp.span,
                    _ordering_help(operand),
                )
                break
    for match in find(condition, ast.Matches):
        kind = operand_type(match.subject, interceptor)
        if kind is not None and kind != "string":
            yield _mismatch(
                f"`matches` needs a string, not a {kind}",
                match.span,
                f"a regex reads text; compare a {kind} with `==`, `<` or `in` instead",
            )
    for like in find(condition, ast.Like):
        kind = operand_type(like.subject, interceptor)
        if kind is not None and kind != "string":
            yield _mismatch(
                f"`like` needs a string, not a {kind}",
                like.span,
                f"globs match text; compare a {kind} with `==` or `in` instead",
            )
        if isinstance(like.globs, ast.ParamRef):
            glob_param = interceptor.params.get(like.globs.name)
            if glob_param is not None and glob_param.type.base != "string":
                yield _mismatch(
                    f"`like` needs string globs; param `{glob_param.name}` is `{glob_param.type}`",
                    like.span,
                    f"declare it `param {glob_param.name}: list[string]` (or `string`)",
                )
    for test in find(condition, ast.TextTest):
        for operand in (test.subject, test.needle):
            kind = operand_type(operand, interceptor)
            domains = test.function == "in_domain" and operand is test.needle and kind == "list"
            if kind is not None and kind != "string" and not domains:
                yield _mismatch(
                    f"`{test.function}` needs strings, not a {kind}",
                    test.span,
                    f"it reads text; compare a {kind} with `==` or `in` instead",
                )
    for member in find(condition, ast.In):
        kind = operand_type(member.container, interceptor)
        if kind is not None and kind != "list":
            yield _mismatch(
                f"`in` needs a list on its right, not a {kind}",
                member.span,
                'write the values as a list, e.g. `in ["a", "b"]`',
            )
    for node in find(condition, ast.Call):
        kind = operand_type(node.argument, interceptor)
        if node.function in _STRING_FUNCTIONS and kind not in (None, "string"):
            yield _mismatch(
                f"`{node.function}` needs a string, not a {kind}",
                node.span,
                f"apply it to a string field; a {kind} needs no `{node.function}`",
            )
        if node.function == "keys" and kind is not None:
            yield _mismatch(
                f"`keys` needs an object, not a {kind}",
                node.span,
                "point the path at an object (its parent), or compare the value itself",
            )
        if node.function == "length" and kind in ("number", "bool", "null"):
            yield _mismatch(
                f"`length` needs a string, list or object, not a {kind}",
                node.span,
                f"compare the {kind} itself, e.g. `$.x > 10`",
            )


def _compare_help(cmp: ast.Compare, left: str, right: str) -> str:
    """The likely fix: a quoted number or boolean, else what each side is."""
    for operand, other in ((cmp.left, right), (cmp.right, left)):
        if isinstance(operand, ast.Literal_) and isinstance(operand.value, str):
            text = operand.value.strip()
            if other in ("number", "int") and _is_number(text):
                return f"write `{text}` without quotes: a quoted value is a string"
            if other == "bool" and text in ("true", "false"):
                return f"write `{text}` without quotes: a quoted value is a string"
        if isinstance(operand, ast.Literal_) and other == "string":
            value = operand.value
            if isinstance(value, bool | int | float) and not isinstance(value, str):
                shown = json.dumps(value)
                return f'quote it, `"{shown}"`, to compare with a string'
    return f"both sides must have one type: the left is a {left}, the right a {right}"


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _ordering_help(operand: ast.Operand) -> str:
    """The likely fix for ordering a non-number: a quoted number, or a length."""
    if isinstance(operand, ast.Literal_) and isinstance(operand.value, str):
        text = operand.value.strip()
        try:
            number = json.loads(text)
        except ValueError:
            number = None
        if isinstance(number, int | float) and not isinstance(number, bool):
            return f'drop the quotes: `{text}` is a number, `"{operand.value}"` a string'
        return (
            "strings are not ordered: compare them with `==`, `like` or `starts_with`, "
            "or compare a length with `length(...)`"
        )
    return "use `length(...)` to compare the length of a string or list"


def check_filter_types(rule: ast.Rule, interceptor: ResolvedInterceptor) -> Iterator[Diagnostic]:
    """Filters are conditions too; their problems are reported at the path."""
    for ref, condition in filter_conditions(rule):
        for found in check_condition_types(condition, interceptor):
            yield dataclasses.replace(found, span=ref.span)


def _whole(value: int | float, what: str, span: Span, minimum: int = 0) -> Iterator[Diagnostic]:
    if not isinstance(value, int) or value < minimum:
        yield Diagnostic(
            Code.E211, f"{what} must be a whole number of at least {minimum}, not `{value}`", span
        )


def check_rule_shapes(interceptor: ResolvedInterceptor) -> Iterator[Diagnostic]:
    validator = interceptor.is_validator
    for rule in interceptor.rules:
        allowed = ast.VALIDATOR_RULES if validator else ast.MUTATOR_RULES
        if not isinstance(rule, allowed):
            word = ast.RULE_KINDS.get(type(rule), "this")
            other = "mutator" if validator else "validator"
            yield Diagnostic(
                Code.E206,
                f"a {word} rule cannot appear in {interceptor.node.kind} `{interceptor.name}`",
                rule.span,
                f"move it into a {other} block",
            )
        yield from check_filter_types(rule, interceptor)
        if isinstance(rule, ast.CheckRule):
            yield from check_condition_types(rule.condition, interceptor)
        elif isinstance(rule, ast.LimitRule):
            yield from _whole(rule.limit, f"a {rule.kind} limit", rule.span)
        elif isinstance(rule, ast.ListRule):
            yield from _check_list_rule(rule, interceptor)
        elif isinstance(rule, ast.FLOW_RULES):
            continue  # checked across the set (check_flow.py)
        elif isinstance(rule, ast.RateLimit):
            yield from check_rate_limit(rule, interceptor)
            if rule.guard is not None:
                yield from check_condition_types(rule.guard.condition, interceptor)
        else:
            guard = getattr(rule, "guard", None)
            if guard is not None:
                yield from check_condition_types(guard.condition, interceptor)
                yield from _check_element_guard(rule, guard)
            if isinstance(rule, ast.Remove | ast.SetValue) and rule.path.source == "$":
                removing = isinstance(rule, ast.Remove)
                yield Diagnostic(
                    Code.E214,
                    f"`{'remove' if removing else 'set'} $` would "
                    f"{'remove' if removing else 'replace'} the whole payload",
                    rule.path.span,
                    "name a field, e.g. "
                    + (
                        "`remove $.arguments.debug`" if removing else "`set $.arguments.limit = 10`"
                    ),
                )
            if isinstance(rule, ast.Mask) and rule.keep is not None:
                yield from _whole(rule.keep, "`keep`", rule.span)
            if isinstance(rule, ast.Truncate):
                yield from _whole(rule.length, "a truncate length", rule.span, minimum=1)


def _per_element_prefix(source: str) -> str | None:
    """The path up to and including its first step that selects many (`[*]`, `.*`, a filter)."""
    try:
        steps = parse_path(source).steps
    except PathSyntaxError:
        return None
    if not any(isinstance(s, Wildcard | Filter | Slice | Descend) for s in steps):
        return None
    for marker in ("[*]", ".*", "[?"):
        at = source.find(marker)
        if at >= 0:
            end = source.find("]", at) + 1 if marker == "[?" else at + len(marker)
            return source[:end] if end > 0 else None
    return None


def _check_element_guard(rule: ast.MutatorRule, guard: ast.Guard) -> Iterator[Diagnostic]:
    """`remove $.tools[*] if $.tools[*].name like "*_admin"` removes every tool.

    A guard is evaluated once for the whole payload, so a guard that reads the
    same elements as the rule's path decides for all of them at once. The
    per-element form is a filter on the rule's path.
    """
    prefix = _per_element_prefix(rule.path.source)
    if prefix is None:
        return
    refs = [r for r in find(guard.condition, ast.PathRef) if r.source.startswith(prefix)]
    if not refs:
        return
    word = ast.RULE_KINDS.get(type(rule), "this")
    help = "a guard is evaluated once for the whole payload; to act on the elements that pass"
    help += ", filter the rule's path"
    if prefix.endswith("[*]") and not guard.unless:
        element = prefix[: -len("[*]")]
        rewritten = _relative(guard.condition, prefix)
        rest = rule.path.source[len(prefix) :]
        help += f": `{word} {element}[?({render_condition(rewritten)})]{rest}`"
    yield Diagnostic(
        Code.E215,
        f"the guard tests `{refs[0].source}` for the whole payload, so `{word}` "
        f"applies to every element of `{prefix}` or to none",
        refs[0].span,
        help,
    )


def _relative(condition: ast.Condition, prefix: str) -> ast.Condition:
    """The condition with ``prefix`` (an element path) rewritten to `@`."""

    def fix(node: object) -> object:
        if isinstance(node, ast.PathRef) and node.source.startswith(prefix):
            return dataclasses.replace(node, source="@" + node.source[len(prefix) :])
        if dataclasses.is_dataclass(node) and not isinstance(node, type):
            changes: dict[str, object] = {}
            for f in dataclasses.fields(node):
                value = getattr(node, f.name)
                if isinstance(value, tuple):
                    changes[f.name] = tuple(fix(v) for v in value)
                elif dataclasses.is_dataclass(value):
                    changes[f.name] = fix(value)
            return dataclasses.replace(node, **changes)
        return node

    return cast(ast.Condition, fix(condition))


def _check_list_rule(rule: ast.ListRule, interceptor: ResolvedInterceptor) -> Iterator[Diagnostic]:
    if isinstance(rule.globs, ast.ParamRef):
        param = interceptor.params.get(rule.globs.name)
        if param is not None and not (param.type.is_list and param.type.base == "string"):
            yield _mismatch(
                f"param `{param.name}` must be a `list[string]` to list {rule.subject}",
                rule.span,
                f"declare it `param {param.name}: list[string]`",
            )
    events = [e for e, _ in interceptor.hooked()]
    targets = tuple(LIST_EVENTS[rule.subject])
    if not any(event_matches(e, t) for e in events for t in targets):
        yield Diagnostic(
            Code.E212,
            f"`{rule.effect} {rule.subject}` has nothing to check on the events of "
            f"`{interceptor.name}`",
            rule.span,
            f"hook {' or '.join(f'`{t}`' for t in targets)}",
        )


def check_tests(
    files: list[ast.PolicyFile],
    names: set[str],
    declared: frozenset[str] = frozenset(),
    codes: frozenset[str] | None = None,
) -> Iterator[Diagnostic]:
    for policy in files:
        for item in policy.items:
            if not isinstance(item, ast.TestBlock):
                continue
            given = [s for s in item.statements if isinstance(s, ast.Given)]
            expects = [s for s in item.statements if isinstance(s, ast.EXPECTATIONS)]
            if len(given) != 1:
                yield Diagnostic(
                    Code.E213,
                    f"test `{item.name}` needs exactly one `given` line, found {len(given)}",
                    item.span,
                    'e.g. `given tools/call request {"name": "search"}`',
                )
            else:
                event = ast.EventName(given[0].event, span=given[0].span)
                yield from check_event_name(event, declared)
            if not expects:
                yield Diagnostic(
                    Code.E213,
                    f"test `{item.name}` expects nothing",
                    item.span,
                    "add `expect allow`, `expect deny`, `expect message` or `expect payload`",
                )
            for statement in item.statements:
                if isinstance(statement, ast.Calls) and not (
                    isinstance(statement.count, int) and 1 <= statement.count <= MAX_CALLS
                ):
                    yield Diagnostic(
                        Code.E213,
                        f"`calls` takes a whole number from 1 to {MAX_CALLS}, "
                        f"not `{statement.count}`",
                        statement.span,
                    )
                if (
                    isinstance(statement, ast.ExpectNoCode)
                    and codes is not None
                    and statement.code not in codes
                ):
                    # A code no rule has never fires: the expectation could not fail.
                    yield Diagnostic(
                        Code.E213,
                        f"test `{item.name}` expects `{statement.code}` not to fire, "
                        "but no rule has that code",
                        statement.span,
                        did_you_mean(statement.code, sorted(codes))
                        or "give the rule a `code NAME` and name it here",
                    )
                if isinstance(statement, ast.ExpectUnchanged) and statement.path is not None:
                    _, problem = parse_checked(statement.path)
                    if problem is not None:
                        yield problem
                refs: tuple[str, ...] = ()
                if isinstance(statement, ast.Only):
                    refs = statement.names
                elif isinstance(statement, ast.TestConfig):
                    refs = (statement.interceptor,)
                for name in refs:
                    if name not in names:
                        yield Diagnostic(
                            Code.E213,
                            f"test `{item.name}` names unknown interceptor `{name}`",
                            statement.span,
                            did_you_mean(name, names),
                        )

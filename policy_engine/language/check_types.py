"""Static types where they are known, and rules in the wrong kind of block.

Operands read from the payload have no static type; literals, params,
function results, `event` and `phase` do. Only certain mismatches are reported.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..wire.events import event_matches
from . import ast
from .check_events import check_event_name
from .diagnostics import Diagnostic, Span
from .model import ResolvedInterceptor
from .resolve import did_you_mean, error
from .walk import find

StaticType = str | None  # "string", "number", "bool", "null", "list", or None (unknown)

_MODEL_EVENTS = ("sampling/createMessage", "llm/completion")


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
        return "string" if operand.function in ("lower", "upper") else "number"
    return None


def _mismatch(message: str, span: Span, help: str | None = None) -> Diagnostic:
    return error("E204", message, span, help)


def check_condition_types(
    condition: ast.Condition, interceptor: ResolvedInterceptor
) -> Iterator[Diagnostic]:
    for cmp in find(condition, ast.Compare):
        left, right = operand_type(cmp.left, interceptor), operand_type(cmp.right, interceptor)
        if left and right and left != right and "null" not in (left, right):
            yield _mismatch(f"cannot compare a {left} with a {right}", cmp.span)
            continue
        ordered = cmp.op in ("<", "<=", ">", ">=")
        for side in (left, right):
            if ordered and side in ("bool", "list", "null", "string"):
                yield _mismatch(
                    f"`{cmp.op}` compares numbers, not a {side}",
                    cmp.span,
                    "use `length(...)` to compare the length of a string or list",
                )
                break
    for match in find(condition, ast.Matches):
        kind = operand_type(match.subject, interceptor)
        if kind is not None and kind != "string":
            yield _mismatch(f"`matches` needs a string, not a {kind}", match.span)
    for like in find(condition, ast.Like):
        kind = operand_type(like.subject, interceptor)
        if kind is not None and kind != "string":
            yield _mismatch(f"`like` needs a string, not a {kind}", like.span)
        if isinstance(like.globs, ast.ParamRef):
            glob_param = interceptor.params.get(like.globs.name)
            if glob_param is not None and glob_param.type.base != "string":
                yield _mismatch(
                    f"`like` needs string globs; param `{glob_param.name}` is `{glob_param.type}`",
                    like.span,
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
        if node.function in ("lower", "upper") and kind not in (None, "string"):
            yield _mismatch(f"`{node.function}` needs a string, not a {kind}", node.span)
        if node.function == "length" and kind in ("number", "bool", "null"):
            yield _mismatch(f"`length` needs a string, list or object, not a {kind}", node.span)


def _whole(value: int | float, what: str, span: Span, minimum: int = 0) -> Iterator[Diagnostic]:
    if not isinstance(value, int) or value < minimum:
        yield error(
            "E211", f"{what} must be a whole number of at least {minimum}, not `{value}`", span
        )


def check_rule_shapes(interceptor: ResolvedInterceptor) -> Iterator[Diagnostic]:
    validator = interceptor.is_validator
    for rule in interceptor.rules:
        allowed = ast.VALIDATOR_RULES if validator else ast.MUTATOR_RULES
        if not isinstance(rule, allowed):
            word = ast.RULE_KINDS.get(type(rule), "this")
            other = "mutator" if validator else "validator"
            yield error(
                "E206",
                f"a {word} rule cannot appear in {interceptor.node.kind} `{interceptor.name}`",
                rule.span,
                f"move it into a {other} block",
            )
        if isinstance(rule, ast.CheckRule):
            yield from check_condition_types(rule.condition, interceptor)
        elif isinstance(rule, ast.LimitRule):
            yield from _whole(rule.limit, f"a {rule.kind} limit", rule.span)
        elif isinstance(rule, ast.ListRule):
            yield from _check_list_rule(rule, interceptor)
        else:
            guard = getattr(rule, "guard", None)
            if guard is not None:
                yield from check_condition_types(guard.condition, interceptor)
            if isinstance(rule, ast.Remove | ast.SetValue) and rule.path.source == "$":
                removing = isinstance(rule, ast.Remove)
                yield error(
                    "E214",
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


def _check_list_rule(rule: ast.ListRule, interceptor: ResolvedInterceptor) -> Iterator[Diagnostic]:
    if isinstance(rule.globs, ast.ParamRef):
        param = interceptor.params.get(rule.globs.name)
        if param is not None and not (param.type.is_list and param.type.base == "string"):
            yield _mismatch(
                f"param `{param.name}` must be a `list[string]` to list {rule.subject}", rule.span
            )
    events = [e for e, _ in interceptor.hooked()]
    targets = ("tools/call",) if rule.subject == "tools" else _MODEL_EVENTS
    if not any(event_matches(e, t) for e in events for t in targets):
        yield error(
            "E212",
            f"`{rule.effect} {rule.subject}` has nothing to check on the events of "
            f"`{interceptor.name}`",
            rule.span,
            f"hook {' or '.join(f'`{t}`' for t in targets)}",
        )


def check_tests(files: list[ast.PolicyFile], names: set[str]) -> Iterator[Diagnostic]:
    for policy in files:
        for item in policy.items:
            if not isinstance(item, ast.TestBlock):
                continue
            given = [s for s in item.statements if isinstance(s, ast.Given)]
            expects = [
                s
                for s in item.statements
                if isinstance(
                    s,
                    ast.ExpectDecision
                    | ast.ExpectMessage
                    | ast.ExpectCode
                    | ast.ExpectPayload
                    | ast.ExpectNoMessages,
                )
            ]
            if len(given) != 1:
                yield error(
                    "E213",
                    f"test `{item.name}` needs exactly one `given` line, found {len(given)}",
                    item.span,
                    'e.g. `given tools/call request {"name": "search"}`',
                )
            else:
                yield from check_event_name(ast.EventName(given[0].event, span=given[0].span))
            if not expects:
                yield error(
                    "E213",
                    f"test `{item.name}` expects nothing",
                    item.span,
                    "add `expect allow`, `expect deny`, `expect message` or `expect payload`",
                )
            for statement in item.statements:
                refs: tuple[str, ...] = ()
                if isinstance(statement, ast.Only):
                    refs = statement.names
                elif isinstance(statement, ast.TestConfig):
                    refs = (statement.interceptor,)
                for name in refs:
                    if name not in names:
                        yield error(
                            "E213",
                            f"test `{item.name}` names unknown interceptor `{name}`",
                            statement.span,
                            did_you_mean(name, names),
                        )

"""Pipeline stage "desugar": the sugar rules (tool and model lists, limits) become core rules.

After this stage every validator rule is a `check` rule, so the compiler
lowers one rule form. Model lists are event-aware: sampling requests carry
model hints, LLM completions a model (sugar_events.py says where).
"""

from __future__ import annotations

from . import ast
from .diagnostics import Span
from .model import PolicySetModel
from .sugar_events import MODEL_PATHS, TOOL_EVENT, TOOL_NAME_PATH

SIZE_UNITS = {None: 1, "b": 1, "kb": 1024, "mb": 1024 * 1024}


def _event_is(name: str, span: Span) -> ast.Condition:
    return ast.Compare("==", ast.EventRef(span=span), ast.Literal_(name, span=span), span=span)


def lower_list_rule(rule: ast.ListRule) -> ast.CheckRule:
    span = rule.span
    # An allow list denies when some value is *not* like any glob (the same as
    # "unless all are like"), so the denial's path names the value that broke it.
    negated = rule.effect == "allow"
    condition: ast.Condition
    if rule.subject == "tools":
        name = ast.PathRef(TOOL_NAME_PATH, span=span)
        test: ast.Condition = ast.Like(name, rule.globs, negated=negated, span=span)
        if negated:  # a call that names no tool is not on any allow list
            test = ast.Or((ast.Exists(name, negated=True, span=span), test), span=span)
        condition = ast.And((_event_is(TOOL_EVENT, span), test), span=span)
        default = "tool is not on the allow list" if negated else "tool is on the deny list"
    else:
        branches: list[ast.Condition] = []
        for event, path in MODEL_PATHS.items():
            hints = ast.Like(ast.PathRef(path, span=span), rule.globs, negated=negated, span=span)
            branches.append(ast.And((_event_is(event, span), hints), span=span))
        condition = ast.Or(tuple(branches), span=span)
        default = "model is not on the allow list" if negated else "model is on the deny list"
    return ast.CheckRule("deny", condition, False, rule.message or default, rule.code, span=span)


def lower_limit_rule(rule: ast.LimitRule) -> ast.CheckRule:
    span = rule.span
    if rule.kind == "size":
        limit = int(rule.limit) * SIZE_UNITS[rule.unit]
        operand: ast.Operand = ast.Call("size", ast.PathRef("$", span=span), span=span)
        default = f"payload is larger than {limit} bytes"
    elif rule.kind == "length":
        assert rule.path is not None
        limit = int(rule.limit)
        operand = ast.Call("length", rule.path, span=span)
        default = f"value is longer than {limit}"
    else:
        assert rule.path is not None
        limit = int(rule.limit)
        operand = ast.Call("count", rule.path, span=span)
        default = f"more than {limit} values"
    condition = ast.Compare(">", operand, ast.Literal_(limit, span=span), span=span)
    return ast.CheckRule("deny", condition, False, rule.message or default, rule.code, span=span)


def core_rule(rule: ast.Rule) -> ast.CoreRule:
    """The rule as the compiler takes it: sugar lowered, everything else as written."""
    if isinstance(rule, ast.ListRule):
        return lower_list_rule(rule)
    if isinstance(rule, ast.LimitRule):
        return lower_limit_rule(rule)
    return rule


def desugar(model: PolicySetModel) -> None:
    for interceptor in model.interceptors:
        interceptor.core_rules = tuple(core_rule(rule) for rule in interceptor.rules)

"""The literals a policy set is written with: what generated payloads are made of.

A rule that compares `$.name` with `"shell_exec"` or `$.maxTokens` with 4096
can only change its decision near those values, so the generator tries
exactly them (and their neighbours) at exactly those paths.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from ..language import ast
from ..language.model import PolicySetModel, ResolvedParam
from ..language.walk import iter_nodes
from .regex_samples import telling_samples

_OPERAND_TYPES = (ast.PathRef, ast.Call)


@dataclass
class Literals:
    """Values per path source (``$.name`` -> {"shell_exec", ...}), and every string seen."""

    by_path: dict[str, list[Any]] = field(default_factory=lambda: defaultdict(list))
    strings: set[str] = field(default_factory=set)
    regexes: dict[str, list[tuple[str, str]]] = field(default_factory=lambda: defaultdict(list))
    """(source, flags) of every pattern read at a path, from every set collected."""

    def add(self, path: str, value: Any) -> None:
        values = self.by_path[path]
        if value not in values:
            values.append(value)
        if isinstance(value, str):
            self.strings.add(value)


def _path_of(operand: Any) -> str | None:
    while isinstance(operand, ast.Call):
        operand = operand.argument
    return operand.source if isinstance(operand, ast.PathRef) else None


def glob_examples(glob: str) -> list[str]:
    """Strings a glob matches (the shortest and a longer one) and one it just misses."""
    shortest = glob.replace("*", "").replace("?", "a")
    longer = glob.replace("*", "zz").replace("?", "b")
    return list(dict.fromkeys([shortest, longer, shortest + "_x" if "*" not in glob else "x"]))


def _numbers(value: float) -> list[Any]:
    if isinstance(value, bool):
        return [value]
    if isinstance(value, int):
        return [value - 1, value, value + 1]
    return [value - 0.5, value, value + 0.5]


def _add_value(found: Literals, ref: Any, path: str, value: Any) -> None:
    """Place ``value`` (a literal or a param's default) and its neighbours at ``path``."""
    if isinstance(ref, ast.Call) and ref.function in ("length", "count", "size"):
        if isinstance(value, int | float) and not isinstance(value, bool):
            size = max(0, int(value) + 1)
            found.add(path, "x" * min(size, 4096))
            found.add(path, "x" * max(0, min(size - 2, 4096)))
        return
    if isinstance(value, int | float) and not isinstance(value, bool):
        for number in _numbers(value):
            found.add(path, number)
    elif isinstance(value, str | bool) or value is None:
        found.add(path, value)


def _value_of(operand: Any, params: dict[str, ResolvedParam]) -> tuple[bool, Any]:
    """A literal's value, or the default of the param it names (what the rule compares with)."""
    if isinstance(operand, ast.Literal_):
        return True, operand.value
    if isinstance(operand, ast.ParamRef):
        param = params.get(operand.name)
        if param is not None and not param.required:
            return True, param.default
    return False, None


def _add_compare(found: Literals, node: ast.Compare, params: dict[str, ResolvedParam]) -> None:
    for ref, other in ((node.left, node.right), (node.right, node.left)):
        path = _path_of(ref)
        known, value = _value_of(other, params)
        if path is not None and known:
            _add_value(found, ref, path, value)


def _globs_of(globs: tuple[str, ...] | ast.ParamRef, params: dict[str, ResolvedParam]) -> list[str]:
    """Literal globs, or the default of the `string` / `list[string]` param that holds them."""
    if isinstance(globs, tuple):
        return list(globs)
    known, value = _value_of(globs, params)
    if not known:
        return []
    values = value if isinstance(value, list | tuple) else [value]
    return [v for v in values if isinstance(v, str)]


def _add_globs(found: Literals, path: str | None, globs: list[str]) -> None:
    for glob in globs:
        found.strings.add(glob)
        if path is not None:
            for example in glob_examples(glob):
                found.add(path, example)


def _regex_of(ref: ast.PatternRef, model: PolicySetModel) -> tuple[str, str] | None:
    if isinstance(ref, ast.RegexLiteral):
        return ref.source, ref.flags
    pattern = model.patterns.get(ref.name)
    return (pattern.source, pattern.flags) if pattern is not None else None


def _add_regexes(
    found: Literals, path: str | None, refs: tuple[ast.PatternRef, ...], model: PolicySetModel
) -> None:
    if path is None:
        return
    for ref in refs:
        regex = _regex_of(ref, model)
        if regex is not None and regex not in found.regexes[path]:
            found.regexes[path].append(regex)


def _add_rule(
    found: Literals, rule: ast.Rule, params: dict[str, ResolvedParam], model: PolicySetModel
) -> None:
    if isinstance(rule, ast.ListRule):
        path = "$.name" if rule.subject == "tools" else "$.model"
        _add_globs(found, path, _globs_of(rule.globs, params))
    if isinstance(rule, ast.MUTATOR_RULES):
        # A mutator's target gets text to rewrite; its replacement is no secret.
        found.by_path.setdefault(rule.path.source, [])
        replacement = getattr(rule, "replacement", None)
        if isinstance(replacement, str):
            found.strings.add(replacement)
        _add_regexes(found, rule.path.source, getattr(rule, "patterns", ()), model)
    if isinstance(rule, ast.LimitRule) and rule.path is not None:
        size = int(rule.limit) + 1
        found.add(rule.path.source, "x" * min(size, 4096))
    for node in iter_nodes(rule):
        if isinstance(node, ast.Compare):
            _add_compare(found, node, params)
        elif isinstance(node, ast.Like):
            _add_globs(found, _path_of(node.subject), _globs_of(node.globs, params))
        elif isinstance(node, ast.Matches):
            _add_regexes(found, _path_of(node.subject), (node.pattern,), model)
        elif isinstance(node, ast.In):
            in_path = _path_of(node.subject)
            known, values = _value_of(node.container, params)
            if in_path is not None and known and isinstance(values, tuple | list):
                for value in values:
                    found.add(in_path, value)
        elif isinstance(node, ast.Literal_) and isinstance(node.value, str):
            found.strings.add(node.value)


def collect_literals(model: PolicySetModel, into: Literals | None = None) -> Literals:
    """The values worth trying at each path; called on both sides of a diff into one result.

    Params count with their defaults and patterns with strings that tell
    every version read at a path apart, so a raised default or a widened
    pattern is tried on both sides of its edge.
    """
    found = into or Literals()
    for interceptor in model.interceptors:
        for param in interceptor.params.values():
            if not param.required and isinstance(param.default, str):
                found.strings.add(param.default)
            elif not param.required and isinstance(param.default, list | tuple):
                found.strings.update(v for v in param.default if isinstance(v, str))
        for rule in interceptor.rules:
            _add_rule(found, rule, interceptor.params, model)
        for event, _ in interceptor.hooked():
            found.strings.add(event)
    for path, regexes in found.regexes.items():
        for sample in telling_samples(regexes):
            found.add(path, sample)
    return found

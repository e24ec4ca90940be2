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
from ..language.model import PolicySetModel
from ..language.walk import iter_nodes

_OPERAND_TYPES = (ast.PathRef, ast.Call)


@dataclass
class Literals:
    """Values per path source (``$.name`` -> {"shell_exec", ...}), and every string seen."""

    by_path: dict[str, list[Any]] = field(default_factory=lambda: defaultdict(list))
    strings: set[str] = field(default_factory=set)

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


def _add_compare(found: Literals, node: ast.Compare) -> None:
    for ref, other in ((node.left, node.right), (node.right, node.left)):
        path = _path_of(ref)
        if path is None or not isinstance(other, ast.Literal_):
            continue
        value = other.value
        if isinstance(ref, ast.Call) and ref.function in ("length", "count", "size"):
            if isinstance(value, int | float) and not isinstance(value, bool):
                size = max(0, int(value) + 1)
                found.add(path, "x" * min(size, 4096))
                found.add(path, "x" * max(0, min(size - 2, 4096)))
            continue
        if isinstance(value, int | float) and not isinstance(value, bool):
            for number in _numbers(value):
                found.add(path, number)
        elif isinstance(value, str | bool) or value is None:
            found.add(path, value)


def collect_literals(model: PolicySetModel, into: Literals | None = None) -> Literals:
    found = into or Literals()
    for interceptor in model.interceptors:
        for rule in interceptor.rules:
            if isinstance(rule, ast.ListRule) and isinstance(rule.globs, tuple):
                path = "$.name" if rule.subject == "tools" else "$.model"
                for glob in rule.globs:
                    for example in glob_examples(glob):
                        found.add(path, example)
                    found.strings.add(glob)
            if isinstance(rule, ast.MUTATOR_RULES):
                # A mutator's target gets text to rewrite; its replacement is no secret.
                found.by_path.setdefault(rule.path.source, [])
                replacement = getattr(rule, "replacement", None)
                if isinstance(replacement, str):
                    found.strings.add(replacement)
            if isinstance(rule, ast.LimitRule) and rule.path is not None:
                size = int(rule.limit) + 1
                found.add(rule.path.source, "x" * min(size, 4096))
            for node in iter_nodes(rule):
                if isinstance(node, ast.Compare):
                    _add_compare(found, node)
                elif isinstance(node, ast.Like) and isinstance(node.globs, tuple):
                    like_path = _path_of(node.subject)
                    for glob in node.globs:
                        found.strings.add(glob)
                        if like_path is not None:
                            for example in glob_examples(glob):
                                found.add(like_path, example)
                elif isinstance(node, ast.In) and isinstance(node.container, ast.Literal_):
                    in_path = _path_of(node.subject)
                    values = node.container.value
                    if in_path is not None and isinstance(values, tuple | list):
                        for value in values:
                            found.add(in_path, value)
                elif isinstance(node, ast.Literal_) and isinstance(node.value, str):
                    found.strings.add(node.value)
        for event, _ in interceptor.hooked():
            found.strings.add(event)
    return found

"""`policyc check --tools SNAPSHOT`: rules checked against the tools a server really has.

A snapshot is a saved `tools/list` result (`{"tools": [...]}`, the JSON-RPC
response holding one, or the bare list). For every interceptor that hooks
`tools/call` requests it reports, with a did-you-mean:

* W102, a tool name (in `allow tools` / `deny tools`, or compared with
  `$.name`) that no tool in the snapshot has: a typo, or a rule left dead by a
  renamed tool;
* W103, an argument path (`$.arguments.x...`) that no input schema of the
  tools the rule can apply to declares;
* W104, a comparison or match whose literal cannot have the argument's
  declared type (`$.arguments.limit == "10"` for an integer `limit`).

They are warnings because the snapshot is one server at one time; under
`--strict` they fail CI like any other warning.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..wire.events import event_matches
from ..wire.suggest import did_you_mean
from . import ast
from .diagnostics import Code, Diagnostic, Span
from .model import PolicySetModel, ResolvedInterceptor
from .path_steps import Field, PathSyntaxError
from .path_syntax import parse_path
from .sugar_events import TOOL_EVENT, TOOL_NAME_PATH
from .walk import find

_GLOB_CHARS = ("*", "?")
_JSON_KINDS = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (tuple, list),
    "object": (dict,),
    "null": (type(None),),
}


class SnapshotError(ValueError):
    """The snapshot is not a tools/list result; the message says what was expected."""


@dataclass(frozen=True)
class ToolSnapshot:
    schemas: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        return list(self.schemas)


def load_snapshot(text: str) -> ToolSnapshot:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise SnapshotError(f"not JSON: {exc}") from None
    if isinstance(data, dict) and isinstance(data.get("result"), dict):
        data = data["result"]
    if isinstance(data, dict):
        data = data.get("tools")
    if not isinstance(data, list):
        raise SnapshotError('expected a tools/list result: {"tools": [{"name": ..., ...}]}')
    schemas: dict[str, dict[str, Any]] = {}
    for tool in data:
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise SnapshotError("every tool needs a string `name`")
        schema = tool.get("inputSchema")
        schemas[tool["name"]] = schema if isinstance(schema, dict) else {}
    return ToolSnapshot(schemas)


def _glob_matches(glob: str, name: str) -> bool:
    """`*` any run, `?` one character, the rest literal (the language's `like`)."""
    if not glob:
        return not name
    head = glob[0]
    if head == "*":
        return any(_glob_matches(glob[1:], name[i:]) for i in range(len(name) + 1))
    return bool(name) and (head == "?" or head == name[0]) and _glob_matches(glob[1:], name[1:])


def _hooks_tool_calls(interceptor: ResolvedInterceptor) -> bool:
    return any(
        event_matches(event, TOOL_EVENT) and phase == "request"
        for event, phase in interceptor.hooked()
    )


def check_against_tools(model: PolicySetModel, tools: ToolSnapshot) -> Iterator[Diagnostic]:
    for interceptor in model.interceptors:
        if not _hooks_tool_calls(interceptor):
            continue
        for rule in interceptor.rules:
            yield from _tool_names(rule, tools)
            yield from _arguments(rule, tools)


def _tool_names(rule: ast.Rule, tools: ToolSnapshot) -> Iterator[Diagnostic]:
    names: list[tuple[str, Span]] = []
    if isinstance(rule, ast.ListRule) and rule.subject == "tools" and isinstance(rule.globs, tuple):
        names += [(glob, rule.span) for glob in rule.globs]
    for node in find(rule, ast.Compare):
        if node.op in ("==", "!="):
            for ref, other in ((node.left, node.right), (node.right, node.left)):
                if (
                    _is_name(ref)
                    and isinstance(other, ast.Literal_)
                    and isinstance(other.value, str)
                ):
                    names.append((other.value, node.span))
    for like in find(rule, ast.Like):
        if _is_name(like.subject) and isinstance(like.globs, tuple):
            names += [(glob, like.span) for glob in like.globs]
    for member in find(rule, ast.In):
        if _is_name(member.subject) and isinstance(member.container, ast.Literal_):
            values = member.container.value
            if isinstance(values, tuple):
                names += [(v, member.span) for v in values if isinstance(v, str)]
    for name, span in names:
        if any(_glob_matches(name, tool) for tool in tools.names):
            continue
        kind = "like" if any(c in name for c in _GLOB_CHARS) else "named"
        yield Diagnostic(
            Code.W102,
            f"no tool in the snapshot is {kind} `{name}`",
            span,
            did_you_mean(name, tools.names)
            or f"the snapshot has: {', '.join(tools.names) or 'no tools'}",
        )


def _is_name(operand: ast.Operand) -> bool:
    return isinstance(operand, ast.PathRef) and operand.source == TOOL_NAME_PATH


def _pinned_tools(rule: ast.Rule, tools: ToolSnapshot) -> list[str]:
    """The tools a rule can apply to: those its condition pins with `$.name == "..."`."""
    condition = rule.condition if isinstance(rule, ast.CheckRule) else None
    guard = getattr(rule, "guard", None)
    if guard is not None and not guard.unless:
        condition = guard.condition
    if condition is None or (isinstance(rule, ast.CheckRule) and rule.unless):
        return tools.names
    parts = condition.operands if isinstance(condition, ast.And) else (condition,)
    pinned = [
        part.right.value
        for part in parts
        if isinstance(part, ast.Compare)
        and part.op == "=="
        and _is_name(part.left)
        and isinstance(part.right, ast.Literal_)
        and part.right.value in tools.schemas
    ]
    return pinned or tools.names


def _arguments(rule: ast.Rule, tools: ToolSnapshot) -> Iterator[Diagnostic]:
    candidates = _pinned_tools(rule, tools)
    typed: dict[int, ast.Literal_] = {}
    for node in find(rule, ast.Compare):
        if isinstance(node.left, ast.PathRef) and isinstance(node.right, ast.Literal_):
            typed[id(node.left)] = node.right
    text_tests: list[ast.Like | ast.Matches] = [*find(rule, ast.Like), *find(rule, ast.Matches)]
    stringy = {id(node.subject) for node in text_tests if not node.negated}
    for ref in find(rule, ast.PathRef):
        keys = _argument_keys(ref.source)
        if not keys:
            continue
        schemas = [(name, _property(tools.schemas[name], keys)) for name in candidates]
        found = [(name, schema) for name, schema in schemas if schema is not None]
        if not found:
            known = sorted({p for name in candidates for p in _properties(tools.schemas[name])})
            where = ", ".join(f"`{n}`" for n in candidates[:3]) + (
                "..." if len(candidates) > 3 else ""
            )
            yield Diagnostic(
                Code.W103,
                f"no input schema of {where} has the argument `{'.'.join(keys)}`",
                ref.span,
                did_you_mean(keys[-1], known) or f"the arguments are: {', '.join(known) or 'none'}",
            )
            continue
        literal = typed.get(id(ref))
        if literal is not None:
            yield from _type_mismatch(ref, keys, found, literal.value, "compared with")
        elif id(ref) in stringy:
            yield from _type_mismatch(ref, keys, found, "", "matched as text")


def _argument_keys(source: str) -> list[str]:
    if not source.startswith("$.arguments"):
        return []
    try:
        steps = parse_path(source).steps
    except PathSyntaxError:
        return []
    keys: list[str] = []
    for step in steps[1:]:
        if not (isinstance(step, Field) and len(step.names) == 1):
            break
        keys.append(step.names[0])
    return keys


def _properties(schema: dict[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties")
    return properties if isinstance(properties, dict) else {}


def _property(schema: dict[str, Any], keys: list[str]) -> dict[str, Any] | None:
    """The schema of the argument at ``keys``; an open schema accepts any name."""
    current: dict[str, Any] = schema
    for key in keys:
        properties = _properties(current)
        if key in properties and isinstance(properties[key], dict):
            current = properties[key]
        elif current.get("additionalProperties") not in (None, False) or not properties:
            return {}
        else:
            return None
    return current


def _type_mismatch(
    ref: ast.PathRef,
    keys: list[str],
    found: list[tuple[str, dict[str, Any]]],
    value: Any,
    how: str,
) -> Iterator[Diagnostic]:
    declared = {name: schema.get("type") for name, schema in found}
    if not all(isinstance(kind, str) and kind in _JSON_KINDS for kind in declared.values()):
        return
    fits = [
        name
        for name, kind in declared.items()
        if isinstance(value, _JSON_KINDS[str(kind)])
        and not (isinstance(value, bool) and kind in ("integer", "number"))
    ]
    if fits:
        return
    kinds = sorted({str(k) for k in declared.values()})
    yield Diagnostic(
        Code.W104,
        f"`arguments.{'.'.join(keys)}` is declared {' or '.join(kinds)}, so being {how} "
        f"{json.dumps(value) if how == 'compared with' else 'a string'} never holds",
        ref.span,
        f"compare it with {'an' if kinds[0][0] in 'aeiou' else 'a'} {kinds[0]} value, "
        "or fix the path",
    )

"""Stage 3: resolve names across the policy set and build each descriptor.

A directory (or the list of files given) is one policy set: patterns defined
at the top of any file are visible in every file, and interceptor names must
be unique across the set.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from typing import Any

from ..wire.constants import INT32_MAX, INT32_MIN, MODE_ALIASES, Mode, Phase
from . import ast
from .builtin_patterns import BUILTIN_PATTERNS
from .diagnostics import Diagnostic, Severity, Span
from .model import NO_DEFAULT, PolicySetModel, ResolvedInterceptor, ResolvedParam, ResolvedPattern
from .path_syntax import filter_conditions
from .walk import find

# `server` is policyc's extension: the backend a gateway routed the message to.
CONTEXT_FIELDS = (
    "principal",
    "traceId",
    "spanId",
    "timestamp",
    "sessionId",
    "interceptorState",
    "server",
)
PRINCIPAL_FIELDS = ("type", "id", "claims")
_JSON_TYPES = {"int": "integer", "number": "number", "string": "string", "bool": "boolean"}
_SETTING_WORDS: dict[type, str] = {
    ast.Description: "description",
    ast.Version: "version",
    ast.ModeSetting: "mode",
    ast.FailSetting: "fail",
    ast.CompatSetting: "compat",
}


def error(code: str, message: str, span: Span, help: str | None = None) -> Diagnostic:
    return Diagnostic(code, Severity.ERROR, message, span, help)


def warning(code: str, message: str, span: Span, help: str | None = None) -> Diagnostic:
    return Diagnostic(code, Severity.WARNING, message, span, help)


def did_you_mean(name: str, candidates: Any) -> str | None:
    names = [str(c) for c in candidates]
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    if not close:
        # `PHONE_NUMBER` for `PHONE`, `EMAIL_ADDRESS` for `EMAIL`: one name holds the
        # other, which the similarity ratio alone misses when the extra part is long.
        lowered = name.lower()
        close = sorted(
            (
                c
                for c in names
                if min(len(c), len(name)) >= 3 and (c.lower() in lowered or lowered in c.lower())
            ),
            key=lambda c: -difflib.SequenceMatcher(None, name, c).ratio(),
        )[:1]
    return f"did you mean `{close[0]}`?" if close else None


def resolve(files: list[ast.PolicyFile]) -> tuple[PolicySetModel, list[Diagnostic]]:
    model = PolicySetModel(files)
    diagnostics: list[Diagnostic] = []
    diagnostics += _collect_patterns(model)
    seen: dict[str, ast.Interceptor] = {}
    for policy in files:
        for item in policy.items:
            if isinstance(item, ast.TestBlock):
                model.tests.append((policy.path, item))
            elif isinstance(item, ast.Interceptor):
                if item.name in seen:
                    first = seen[item.name].name_span
                    diagnostics.append(
                        error(
                            "E102",
                            f"interceptor `{item.name}` is already defined at {first}",
                            item.name_span,
                            "interceptor names must be unique across the policy set; rename one",
                        )
                    )
                    continue
                seen[item.name] = item
                resolved, problems = _resolve_interceptor(item, policy.path)
                diagnostics += problems
                if resolved is not None:
                    model.interceptors.append(resolved)
    diagnostics += _check_references(model)
    return model, diagnostics


def _collect_patterns(model: PolicySetModel) -> Iterator[Diagnostic]:
    for name, builtin in BUILTIN_PATTERNS.items():
        flags = "i" if builtin.case_insensitive else ""
        model.patterns[name] = ResolvedPattern(name, builtin.regex, flags, builtin.check, True)
    for policy in model.files:
        for item in policy.items:
            if not isinstance(item, ast.PatternDef):
                continue
            existing = model.patterns.get(item.name)
            if existing is not None and not existing.builtin:
                yield error(
                    "E105",
                    f"pattern `{item.name}` is already defined at {existing.span}",
                    item.span,
                    "rename one of the patterns",
                )
                continue
            if existing is not None:
                yield warning(
                    "W308",
                    f"pattern `{item.name}` shadows the built-in pattern of the same name",
                    item.span,
                    "choose another name unless you mean to replace the built-in",
                )
            model.patterns[item.name] = ResolvedPattern(
                item.name, item.regex.source, item.regex.flags, None, False, item.span
            )


def _resolve_interceptor(
    node: ast.Interceptor, file: str
) -> tuple[ResolvedInterceptor | None, list[Diagnostic]]:
    problems: list[Diagnostic] = []
    hooks: list[tuple[tuple[str, ...], Phase]] = []
    priorities: dict[Phase, int] = {}
    priority_spans: dict[Phase, Span] = {}
    settings: dict[type, ast.Statement] = {}
    params: dict[str, ResolvedParam] = {}
    rules: list[ast.Rule] = []
    servers: list[tuple[str, ast.ServerMap]] = []
    description, version = node.description, node.version
    mode: str = "active"
    fail_open = False
    compat: dict[str, str] | None = None

    def set_priority(phase: Phase, value: int | float, span: Span) -> None:
        if not isinstance(value, int):
            problems.append(error("E211", f"priority must be a whole number, not `{value}`", span))
            return
        if not INT32_MIN <= value <= INT32_MAX:
            problems.append(
                error(
                    "E205",
                    f"priority `{value}` is out of range",
                    span,
                    f"priorities are 32-bit signed integers ({INT32_MIN} to {INT32_MAX})",
                )
            )
            return
        if phase in priorities and priorities[phase] != value:
            problems.append(
                error(
                    "E208",
                    f"{phase} priority is set twice ({priorities[phase]} at "
                    f"{priority_spans[phase]}, then {value})",
                    span,
                    "keep one priority per phase",
                )
            )
            return
        priorities[phase] = value
        priority_spans[phase] = span

    for statement in node.statements:
        if isinstance(statement, ast.Hook):
            phases: list[Phase] = (
                ["request", "response"] if statement.phases == "both" else [statement.phases]
            )
            events = [e.name for e in statement.events]
            for phase in phases:
                hooks.append((tuple(events), phase))
                if statement.priority is not None:
                    set_priority(phase, statement.priority, statement.span)
            continue
        if isinstance(statement, ast.ParamDef):
            if statement.name in params:
                problems.append(
                    error(
                        "E105",
                        f"param `{statement.name}` is already declared at "
                        f"{params[statement.name].span}",
                        statement.span,
                    )
                )
                continue
            problems += _check_param_default(statement)
            default = NO_DEFAULT if statement.default is None else _plain(statement.default.value)
            params[statement.name] = ResolvedParam(
                statement.name, statement.type, default, statement.span
            )
            continue
        if isinstance(statement, ast.PrioritySetting):
            if statement.both is not None:
                set_priority("request", statement.both, statement.span)
                set_priority("response", statement.both, statement.span)
            for phase, value in statement.per_phase:
                set_priority(phase, value, statement.span)
            continue
        if isinstance(
            statement,
            ast.Description | ast.Version | ast.ModeSetting | ast.FailSetting | ast.CompatSetting,
        ):
            header_set = (
                isinstance(statement, ast.Description) and node.description is not None
            ) or (isinstance(statement, ast.Version) and node.version is not None)
            if type(statement) in settings or header_set:
                word = _SETTING_WORDS[type(statement)]
                first = settings.get(type(statement))
                where = f"first at {first.span}" if first is not None else "also in the header"
                problems.append(
                    error(
                        "E208",
                        f"`{word}` is given twice ({where})",
                        statement.span,
                        "remove one of them",
                    )
                )
                continue
            settings[type(statement)] = statement
            if isinstance(statement, ast.Description):
                description = statement.text
            elif isinstance(statement, ast.Version):
                version = statement.text
            elif isinstance(statement, ast.ModeSetting):
                mode = MODE_ALIASES.get(statement.mode, statement.mode)
            elif isinstance(statement, ast.FailSetting):
                fail_open = statement.open
            else:
                compat = {"minProtocol": statement.min_protocol}
                if statement.max_protocol is not None:
                    compat["maxProtocol"] = statement.max_protocol
            continue
        if isinstance(statement, ast.Acknowledge):
            continue  # applied to the diagnostics by the pipeline (acknowledge.py)
        if isinstance(statement, ast.ServerMap):
            servers.extend((tool, statement) for tool in statement.tools)
            continue
        rules.append(statement)

    if not hooks:
        problems.append(
            error(
                "E207",
                f"{node.kind} `{node.name}` has no hooks",
                node.name_span,
                "add a line such as `on tools/call request`",
            )
        )
    if node.kind == "validator" and priorities:
        problems.append(
            warning(
                "W307",
                "priority has no effect on a validator",
                next(iter(priority_spans.values())),
                "validators run in parallel; only mutators are ordered by priority",
            )
        )
    hint: int | dict[str, int] | None = None
    if priorities:
        request, response = priorities.get("request"), priorities.get("response")
        if request == response and request is not None:
            hint = request
        else:
            hint = {phase: value for phase, value in priorities.items()}
    resolved_mode: Mode = "audit" if mode == "audit" else "active"
    fields: dict[str, Any] = {
        "name": node.name,
        "version": version,
        "description": description,
        "type": "validation" if node.kind == "validator" else "mutation",
        "hooks": [{"events": list(events), "phase": phase} for events, phase in hooks],
        "mode": resolved_mode,
        "failOpen": fail_open,
        "priorityHint": hint,
        "compat": compat,
        "configSchema": _config_schema(params) if params else None,
    }
    fields = {key: value for key, value in fields.items() if value is not None}
    if not hooks:
        return None, problems
    resolved_priorities: dict[Phase, int] = {
        "request": priorities.get("request", 0),
        "response": priorities.get("response", 0),
    }
    resolved = ResolvedInterceptor(
        node,
        file,
        fields,
        params,
        tuple(rules),
        resolved_priorities,
        hooks,
        resolved_mode,
        fail_open,
        servers=_server_map(servers, problems),
    )
    return resolved, problems


def _server_map(
    entries: list[tuple[str, ast.ServerMap]], problems: list[Diagnostic]
) -> dict[str, str]:
    """Tool name -> server; a tool given to two servers is an error (E230)."""
    owners: dict[str, str] = {}
    for tool, statement in entries:
        owner = owners.get(tool)
        if owner is not None and owner != statement.server:
            problems.append(
                error(
                    "E230",
                    f"tool `{tool}` is given to servers `{owner}` and `{statement.server}`",
                    statement.span,
                    "a tool belongs to one server; keep it in one `server ... tools` line",
                )
            )
            continue
        owners[tool] = statement.server
    return owners


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def value_fits(value: Any, type_ref: ast.TypeRef) -> bool:
    """Whether a JSON value fits a declared param type (bool is not a number)."""
    if type_ref.is_list:
        return isinstance(value, list | tuple) and all(
            value_fits(v, ast.TypeRef(type_ref.base)) for v in value
        )
    if type_ref.base == "bool":
        return isinstance(value, bool)
    if type_ref.base == "string":
        return isinstance(value, str)
    if isinstance(value, bool):
        return False
    if type_ref.base == "int":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    return isinstance(value, int | float)


def _check_param_default(param: ast.ParamDef) -> Iterator[Diagnostic]:
    if param.default is not None and not value_fits(param.default.value, param.type):
        yield error(
            "E209",
            f"default of param `{param.name}` is not of type `{param.type}`",
            param.default.span,
            f"give a value of type `{param.type}` or change the declared type",
        )


def _config_schema(params: dict[str, ResolvedParam]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in params.values():
        schema: dict[str, Any] = {"type": _JSON_TYPES[param.type.base]}
        if param.type.is_list:
            schema = {"type": "array", "items": schema}
        if param.required:
            required.append(param.name)
        else:
            schema["default"] = param.default
        properties[param.name] = schema
    result: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        result["required"] = required
    return result


def _check_references(model: PolicySetModel) -> Iterator[Diagnostic]:
    # Pattern and context names are looked up in every interceptor block, also
    # those left out of the model (no hooks, duplicate name), so their problems
    # are still reported and the patterns they use are not reported as unused.
    used_patterns: set[str] = set()
    for policy in model.files:
        for item in policy.items:
            if not isinstance(item, ast.Interceptor):
                continue
            for ref, span in _pattern_refs(item):
                used_patterns.add(ref.name)
                if ref.name not in model.patterns:
                    hint = did_you_mean(ref.name, model.patterns)
                    yield error(
                        "E103",
                        f"unknown pattern `{ref.name}`",
                        span,
                        hint or "define it with `pattern NAME = /regex/` or use a built-in pattern",
                    )
            for context_ref in find(item, ast.ContextRef):
                yield from _check_context_ref(context_ref)
    for interceptor in model.interceptors:
        used_params: set[str] = set()
        for rule in interceptor.rules:
            for param_ref in find(rule, ast.ParamRef):
                used_params.add(param_ref.name)
                if param_ref.name not in interceptor.params:
                    hint = did_you_mean(param_ref.name, interceptor.params)
                    declared = _declaration_for(param_ref, rule)
                    yield error(
                        "E104",
                        f"unknown param `{param_ref.name}` in `{interceptor.name}`",
                        param_ref.span,
                        hint or f"declare it: `param {param_ref.name}: {declared}`",
                    )
        for name, param in interceptor.params.items():
            if name not in used_params:
                yield warning("W306", f"param `{name}` is never used", param.span)
    for pattern in model.patterns.values():
        if not pattern.builtin and pattern.name not in used_patterns and pattern.span is not None:
            yield warning("W306", f"pattern `{pattern.name}` is never used", pattern.span)


def _pattern_refs(item: ast.Interceptor) -> Iterator[tuple[ast.PatternName, Span]]:
    """Pattern names in rules, and in path filters (reported at their path)."""
    for ref in find(item, ast.PatternName):
        yield ref, ref.span
    for path, condition in filter_conditions(item):
        for ref in find(condition, ast.PatternName):
            yield ref, path.span


_NUMBER_CALLS = ("length", "size", "count")


def _declaration_for(ref: ast.ParamRef, rule: ast.Rule) -> str:
    """The type and a placeholder default for an undeclared param, inferred from its use."""
    if any(found is ref for found in _list_param_refs(rule)):
        return 'list[string] = ["..."]'
    for node in find(rule, ast.Compare):
        if node.left is ref or node.right is ref:
            other = node.right if node.left is ref else node.left
            value = other.value if isinstance(other, ast.Literal_) else None
            if isinstance(value, bool):
                return "bool = false"
            if isinstance(value, int | float) or (
                isinstance(other, ast.Call) and other.function in _NUMBER_CALLS
            ):
                return "int = 0" if not isinstance(value, float) else "number = 0"
            if node.op in ("<", "<=", ">", ">="):
                return "number = 0"
    return 'string = "..."'


def _list_param_refs(rule: ast.Rule) -> Iterator[ast.ParamRef]:
    """Param references used where a list is needed: globs and `in` containers."""
    if isinstance(rule, ast.ListRule) and isinstance(rule.globs, ast.ParamRef):
        yield rule.globs
    for like in find(rule, ast.Like):
        if isinstance(like.globs, ast.ParamRef):
            yield like.globs
    for member in find(rule, ast.In):
        if isinstance(member.container, ast.ParamRef):
            yield member.container


def _check_context_ref(ref: ast.ContextRef) -> Iterator[Diagnostic]:
    head = ref.parts[0]
    if head not in CONTEXT_FIELDS:
        yield error(
            "E106",
            f"unknown context field `{head}`",
            ref.span,
            did_you_mean(head, CONTEXT_FIELDS) or f"the context has: {', '.join(CONTEXT_FIELDS)}",
        )
    elif head == "principal" and len(ref.parts) > 1 and ref.parts[1] not in PRINCIPAL_FIELDS:
        yield error(
            "E106",
            f"unknown principal field `{ref.parts[1]}`",
            ref.span,
            did_you_mean(ref.parts[1], PRINCIPAL_FIELDS)
            or "a principal has `type`, `id` and `claims` (e.g. `context.principal.claims.roles`)",
        )

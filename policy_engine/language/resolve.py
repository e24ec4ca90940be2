"""Pipeline stage "resolve": names across the policy set, and each block's settings.

A directory (or the list of files given) is one policy set: patterns defined
at the top of any file are visible in every file, and interceptor names must
be unique across the set.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..wire.constants import INT32_MAX, INT32_MIN, MODE_ALIASES, Phase
from ..wire.suggest import did_you_mean
from . import ast
from .builtin_patterns import BUILTIN_PATTERNS
from .diagnostics import Code, Diagnostic, Span
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
_SETTING_WORDS: dict[type, str] = {
    ast.Description: "description",
    ast.Version: "version",
    ast.ModeSetting: "mode",
    ast.FailSetting: "fail",
    ast.CompatSetting: "compat",
}


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
                        Diagnostic(
                            Code.E102,
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
                yield Diagnostic(
                    Code.E105,
                    f"pattern `{item.name}` is already defined at {existing.span}",
                    item.span,
                    "rename one of the patterns",
                )
                continue
            if existing is not None:
                yield Diagnostic(
                    Code.W308,
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
    """Settle the block's statements: hooks, params, settings, priorities and rules."""
    block = _Block(node)
    for statement in node.statements:
        block.take(statement)
    problems = block.problems
    if not block.hooks:
        problems.append(
            Diagnostic(
                Code.E207,
                f"{node.kind} `{node.name}` has no hooks",
                node.name_span,
                "add a line such as `on tools/call request`",
            )
        )
        return None, problems
    if node.kind == "validator" and block.priorities:
        problems.append(
            Diagnostic(
                Code.W307,
                "priority has no effect on a validator",
                next(iter(block.priority_spans.values())),
                "validators run in parallel; only mutators are ordered by priority",
            )
        )
    resolved = ResolvedInterceptor(
        node,
        file,
        block.params,
        tuple(block.rules),
        {phase: block.priorities.get(phase, 0) for phase in ("request", "response")},
        block.hooks,
        "audit" if block.mode == "audit" else "active",
        block.fail_open,
        block.description,
        block.version,
        block.compat,
        declared_priorities=dict(block.priorities),
        servers=block.servers,
    )
    return resolved, problems


class _Block:
    """One interceptor block's statements, taken one at a time; problems collected."""

    def __init__(self, node: ast.Interceptor) -> None:
        self.node = node
        self.problems: list[Diagnostic] = []
        self.hooks: list[tuple[tuple[str, ...], Phase]] = []
        self.priorities: dict[Phase, int] = {}
        self.priority_spans: dict[Phase, Span] = {}
        self.settings: dict[type, ast.Statement] = {}
        self.params: dict[str, ResolvedParam] = {}
        self.rules: list[ast.Rule] = []
        self.servers: dict[str, str] = {}
        self.description, self.version = node.description, node.version
        self.mode: str = "active"
        self.fail_open = False
        self.compat: dict[str, str] | None = None

    def take(self, statement: ast.Statement) -> None:
        if isinstance(statement, ast.Hook):
            self._hook(statement)
        elif isinstance(statement, ast.ParamDef):
            self._param(statement)
        elif isinstance(statement, ast.PrioritySetting):
            if statement.both is not None:
                self._priority("request", statement.both, statement.span)
                self._priority("response", statement.both, statement.span)
            for phase, value in statement.per_phase:
                self._priority(phase, value, statement.span)
        elif isinstance(statement, _SETTINGS):
            self._setting(statement)
        elif isinstance(statement, ast.ServerMap):
            self._server_map(statement)
        elif not isinstance(statement, ast.Acknowledge):  # applied by acknowledge.py
            self.rules.append(statement)

    def _server_map(self, statement: ast.ServerMap) -> None:
        """Tool name -> server; a tool given to two servers is an error (E230)."""
        for tool in statement.tools:
            owner = self.servers.get(tool)
            if owner is not None and owner != statement.server:
                self.problems.append(
                    Diagnostic(
                        Code.E230,
                        f"tool `{tool}` is given to servers `{owner}` and `{statement.server}`",
                        statement.span,
                        "a tool belongs to one server; keep it in one `server ... tools` line",
                    )
                )
                continue
            self.servers[tool] = statement.server

    def _hook(self, hook: ast.Hook) -> None:
        phases: list[Phase] = ["request", "response"] if hook.phases == "both" else [hook.phases]
        events = tuple(e.name for e in hook.events)
        for phase in phases:
            self.hooks.append((events, phase))
            if hook.priority is not None:
                self._priority(phase, hook.priority, hook.span)

    def _param(self, param: ast.ParamDef) -> None:
        if param.name in self.params:
            self.problems.append(
                Diagnostic(
                    Code.E105,
                    f"param `{param.name}` is already declared at {self.params[param.name].span}",
                    param.span,
                )
            )
            return
        self.problems += _check_param_default(param)
        default = NO_DEFAULT if param.default is None else _plain(param.default.value)
        self.params[param.name] = ResolvedParam(param.name, param.type, default, param.span)

    def _priority(self, phase: Phase, value: int | float, span: Span) -> None:
        if not isinstance(value, int):
            self.problems.append(
                Diagnostic(Code.E211, f"priority must be a whole number, not `{value}`", span)
            )
            return
        if not INT32_MIN <= value <= INT32_MAX:
            self.problems.append(
                Diagnostic(
                    Code.E205,
                    f"priority `{value}` is out of range",
                    span,
                    f"priorities are 32-bit signed integers ({INT32_MIN} to {INT32_MAX})",
                )
            )
            return
        if phase in self.priorities and self.priorities[phase] != value:
            self.problems.append(
                Diagnostic(
                    Code.E208,
                    f"{phase} priority is set twice ({self.priorities[phase]} at "
                    f"{self.priority_spans[phase]}, then {value})",
                    span,
                    "keep one priority per phase",
                )
            )
            return
        self.priorities[phase] = value
        self.priority_spans[phase] = span

    def _setting(self, statement: _Setting) -> None:
        node = self.node
        header_set = (isinstance(statement, ast.Description) and node.description is not None) or (
            isinstance(statement, ast.Version) and node.version is not None
        )
        if type(statement) in self.settings or header_set:
            first = self.settings.get(type(statement))
            where = f"first at {first.span}" if first is not None else "also in the header"
            self.problems.append(
                Diagnostic(
                    Code.E208,
                    f"`{_SETTING_WORDS[type(statement)]}` is given twice ({where})",
                    statement.span,
                    "remove one of them",
                )
            )
            return
        self.settings[type(statement)] = statement
        if isinstance(statement, ast.Description):
            self.description = statement.text
        elif isinstance(statement, ast.Version):
            self.version = statement.text
        elif isinstance(statement, ast.ModeSetting):
            self.mode = MODE_ALIASES.get(statement.mode, statement.mode)
        elif isinstance(statement, ast.FailSetting):
            self.fail_open = statement.open
        else:
            self.compat = {"minProtocol": statement.min_protocol}
            if statement.max_protocol is not None:
                self.compat["maxProtocol"] = statement.max_protocol


_Setting = ast.Description | ast.Version | ast.ModeSetting | ast.FailSetting | ast.CompatSetting
_SETTINGS = (ast.Description, ast.Version, ast.ModeSetting, ast.FailSetting, ast.CompatSetting)


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
        yield Diagnostic(
            Code.E209,
            f"default of param `{param.name}` is not of type `{param.type}`",
            param.default.span,
            f"give a value of type `{param.type}` or change the declared type",
        )


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
                    yield Diagnostic(
                        Code.E103,
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
                    yield Diagnostic(
                        Code.E104,
                        f"unknown param `{param_ref.name}` in `{interceptor.name}`",
                        param_ref.span,
                        hint or f"declare it: `param {param_ref.name}: {declared}`",
                    )
        for name, param in interceptor.params.items():
            if name not in used_params:
                yield Diagnostic(Code.W306, f"param `{name}` is never used", param.span)
    for pattern in model.patterns.values():
        if not pattern.builtin and pattern.name not in used_patterns and pattern.span is not None:
            yield Diagnostic(Code.W306, f"pattern `{pattern.name}` is never used", pattern.span)


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
        yield Diagnostic(
            Code.E106,
            f"unknown context field `{head}`",
            ref.span,
            did_you_mean(head, CONTEXT_FIELDS) or f"the context has: {', '.join(CONTEXT_FIELDS)}",
        )
    elif head == "principal" and len(ref.parts) > 1 and ref.parts[1] not in PRINCIPAL_FIELDS:
        yield Diagnostic(
            Code.E106,
            f"unknown principal field `{ref.parts[1]}`",
            ref.span,
            did_you_mean(ref.parts[1], PRINCIPAL_FIELDS)
            or "a principal has `type`, `id` and `claims` (e.g. `context.principal.claims.roles`)",
        )

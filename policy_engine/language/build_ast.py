"""Turns lark's concrete syntax tree into the AST, carrying spans from ``meta``."""

from __future__ import annotations

import dataclasses
import json
from typing import Any, TypeVar, cast

from lark import Token, Transformer_NonRecursive, Tree, v_args
from lark.tree import Meta

from . import ast
from .diagnostics import Code, Span
from .limits import DEFAULT_MAX_NESTING, MAX_NESTING_CEILING

R = TypeVar("R", bound=ast.Rule)


class AstBuildError(Exception):
    """Text that parses but cannot be built: a bad escape (E005), too deep a nesting (E008)."""

    def __init__(
        self, message: str, span: Span, help: str | None = None, code: Code = Code.E005
    ) -> None:
        super().__init__(message)
        self.message = message
        self.span = span
        self.help = help
        self.code = code


_N = TypeVar("_N")


def _tokens(children: list[Any]) -> list[Token]:
    return [c for c in children if isinstance(c, Token)]


@v_args(meta=True)
class AstBuilder(Transformer_NonRecursive[Token, Any]):
    """One method per grammar rule or alias; each returns an AST node or a plain value.

    Non-recursive, so a 10,000-term `and` (a left-leaning tree that deep) builds;
    nesting that stays nested in the AST (`not not ...`, lists in lists) is
    measured bottom-up and refused past ``max_nesting`` (E008), since later
    stages walk it recursively.
    """

    def __init__(self, file: str, max_nesting: int = DEFAULT_MAX_NESTING) -> None:
        super().__init__(visit_tokens=False)
        self.file = file
        self.max_nesting = max_nesting
        # id -> (depth, node); holding the node keeps its id from being reused.
        self._depth: dict[int, tuple[int, Any]] = {}

    def _nested(self, node: _N, meta: Meta, kind: str, *inner: Any) -> _N:
        """Record ``node`` one level deeper than the deepest of ``inner``; refuse too deep."""
        return self._record(node, meta, kind, 1 + max(map(self._depth_of, inner), default=0))

    def _record(self, node: _N, meta: Meta, kind: str, depth: int) -> _N:
        if depth > self.max_nesting:
            raise AstBuildError(
                f"{kind} nests deeper than the limit of {self.max_nesting} levels",
                self._span(meta),
                "split it into simpler rules or values, or raise the limit with "
                f"`--max-nesting` (at most {MAX_NESTING_CEILING})",
                code=Code.E008,
            )
        self._depth[id(node)] = (depth, node)
        return node

    def _depth_of(self, node: Any) -> int:
        known = self._depth.get(id(node))
        return 0 if known is None else known[0]

    def _same_depth(self, node: _N, inner: Any) -> _N:
        self._depth[id(node)] = (self._depth_of(inner), node)
        return node

    # -- helpers -------------------------------------------------------------

    def _span(self, meta: Meta) -> Span:
        if getattr(meta, "empty", True):
            return Span(self.file, 1, 1, 1, 1)
        return Span(self.file, meta.line, meta.column, meta.end_line, meta.end_column)

    def _tspan(self, token: Token) -> Span:
        return Span(
            self.file,
            token.line or 1,
            token.column or 1,
            token.end_line or token.line or 1,
            token.end_column or (token.column or 1) + len(token),
        )

    def _string(self, token: Token) -> str:
        try:
            value = json.loads(str(token))
        except json.JSONDecodeError as exc:
            raise AstBuildError(
                f"invalid escape in string {token}",
                self._tspan(token),
                'strings use JSON escapes such as `\\"`, `\\\\`, `\\n` and `\\u00e9`',
            ) from exc
        return cast(str, value)

    @staticmethod
    def _number(token: Token) -> int | float:
        text = str(token)
        if any(c in text for c in ".eE"):
            return float(text)
        return int(text)

    def _regex(self, token: Token) -> ast.RegexLiteral:
        text = str(token)
        end = text.rfind("/")
        source = text[1:end].replace("\\/", "/")
        return ast.RegexLiteral(source, text[end + 1 :], span=self._tspan(token))

    def _message_and_code(self, rest: list[Any]) -> tuple[str | None, str | None]:
        message = None
        code = None
        for item in rest:
            if isinstance(item, Token) and item.type == "STRING":
                message = self._string(item)
            elif isinstance(item, _Code):
                code = item.name
        return message, code

    @staticmethod
    def _acknowledged(rule: R, rest: list[Any]) -> R | list[Any]:
        """An `acknowledge` on the rule's own line is the rule's; on a later line, the block's.

        Statements are not separated by newlines, so the grammar attaches an
        `acknowledge` that follows a rule to the rule, as it does for `priority`.
        """
        ack = next((item for item in rest if isinstance(item, ast.Acknowledge)), None)
        if ack is None:
            return rule
        if ack.span.line == rule.span.line:
            return dataclasses.replace(rule, acknowledged=ack.codes)
        return [rule, ack]

    # -- top level -----------------------------------------------------------

    def start(self, meta: Meta, children: list[Any]) -> tuple[Any, ...]:
        return tuple(children)

    def pattern_def(self, meta: Meta, children: list[Any]) -> ast.PatternDef:
        name, regex = children
        return ast.PatternDef(str(name), self._regex(regex), span=self._span(meta))

    def interceptor(self, meta: Meta, children: list[Any]) -> ast.Interceptor:
        kind, name, *rest = children
        description = version = None
        statements = []
        for item in _flatten(rest):
            if isinstance(item, _Header):
                if item.field == "description":
                    description = item.value
                else:
                    version = item.value
            else:
                statements.append(item)
        return ast.Interceptor(
            kind,
            str(name),
            tuple(statements),
            description=description,
            version=version,
            span=self._span(meta),
            name_span=self._tspan(name),
        )

    def kind(self, meta: Meta, children: list[Any]) -> str:
        return str(children[0])

    def event_decl(self, meta: Meta, children: list[Any]) -> ast.EventDecl:
        events = tuple(ast.EventName(str(t), span=self._tspan(t)) for t in children)
        return ast.EventDecl(events, span=self._span(meta))

    def acknowledge(self, meta: Meta, children: list[Any]) -> ast.Acknowledge:
        *codes, reason = children
        return ast.Acknowledge(
            tuple(str(c) for c in codes),
            None if reason is None else self._string(reason),
            span=self._span(meta),
        )

    def header_description(self, meta: Meta, children: list[Any]) -> _Header:
        return _Header("description", self._string(children[0]))

    def header_version(self, meta: Meta, children: list[Any]) -> _Header:
        return _Header("version", self._string(children[0]))

    # -- settings ------------------------------------------------------------

    def hook(self, meta: Meta, children: list[Any]) -> list[Any]:
        """A hook, or a hook and a block `priority` setting.

        Statements are not separated by newlines, so the grammar attaches a
        `priority` line that follows a hook to the hook. It belongs to the
        hook only when written on the hook's own line; otherwise it is split
        off here as the block setting it reads as.
        """
        events, phases, priority = children
        if priority is None:
            return [ast.Hook(events, phases, None, span=self._span(meta))]
        last = events[-1].span
        keyword: Token = priority.keyword
        if priority.both is not None and keyword.line == last.line:
            return [ast.Hook(events, phases, priority.both, span=self._span(meta))]
        end_column = last.end_column + 1 + len(phases)
        hook_span = Span(self.file, meta.line, meta.column, last.line, end_column)
        setting_span = Span(
            self.file, keyword.line or 1, keyword.column or 1, meta.end_line, meta.end_column
        )
        setting = ast.PrioritySetting(priority.both, priority.per_phase, span=setting_span)
        return [ast.Hook(events, phases, None, span=hook_span), setting]

    def event_list(self, meta: Meta, children: list[Any]) -> tuple[ast.EventName, ...]:
        return tuple(ast.EventName(str(t), span=self._tspan(t)) for t in children)

    def hook_priority(self, meta: Meta, children: list[Any]) -> _Priority:
        keyword, number = children
        return _Priority(keyword, self._number(number), ())

    def hook_phase_priority(self, meta: Meta, children: list[Any]) -> _Priority:
        keyword, *rest = children
        pairs = tuple(
            (rest[i], self._number(rest[i + 1])) for i in range(0, len(rest), 2) if rest[i]
        )
        return _Priority(keyword, None, pairs)

    def phases(self, meta: Meta, children: list[Any]) -> str:
        return str(children[0])

    phase = mode = fail_policy = type_name = severity = guard_word = kind
    list_effect = list_subject = size_unit = quantifier = type_test = function = kind
    decision = side = text_test = rate_unit = kind

    def description_stmt(self, meta: Meta, children: list[Any]) -> ast.Description:
        return ast.Description(self._string(children[0]), span=self._span(meta))

    def version_stmt(self, meta: Meta, children: list[Any]) -> ast.Version:
        return ast.Version(self._string(children[0]), span=self._span(meta))

    def mode_stmt(self, meta: Meta, children: list[Any]) -> ast.ModeSetting:
        return ast.ModeSetting(children[0], span=self._span(meta))

    def fail_stmt(self, meta: Meta, children: list[Any]) -> ast.FailSetting:
        return ast.FailSetting(children[0] == "open", span=self._span(meta))

    def priority_stmt(self, meta: Meta, children: list[Any]) -> ast.PrioritySetting:
        return ast.PrioritySetting(both=self._number(children[0]), span=self._span(meta))

    def phase_priority_stmt(self, meta: Meta, children: list[Any]) -> ast.PrioritySetting:
        pairs = []
        for i in range(0, len(children), 2):
            if children[i] is not None:
                pairs.append((children[i], self._number(children[i + 1])))
        return ast.PrioritySetting(per_phase=tuple(pairs), span=self._span(meta))

    def compat_stmt(self, meta: Meta, children: list[Any]) -> ast.CompatSetting:
        low, high = children
        return ast.CompatSetting(
            self._string(low),
            None if high is None else self._string(high),
            span=self._span(meta),
        )

    def param_def(self, meta: Meta, children: list[Any]) -> ast.ParamDef:
        name, type_ref, default = children
        return ast.ParamDef(str(name), type_ref, default, span=self._span(meta))

    def scalar_type(self, meta: Meta, children: list[Any]) -> ast.TypeRef:
        return ast.TypeRef(children[0], span=self._span(meta))

    def list_type(self, meta: Meta, children: list[Any]) -> ast.TypeRef:
        return ast.TypeRef(children[0], is_list=True, span=self._span(meta))

    # -- validator rules -----------------------------------------------------

    def rule_code(self, meta: Meta, children: list[Any]) -> _Code:
        return _Code(str(children[0]))

    def check_rule(self, meta: Meta, children: list[Any]) -> Any:
        severity, guard_word, condition, *rest = children
        message, code = self._message_and_code(rest)
        rule = ast.CheckRule(
            severity,
            condition,
            unless=guard_word == "unless",
            message=message,
            code=code,
            span=self._span(meta),
        )
        return self._acknowledged(rule, rest)

    def list_rule(self, meta: Meta, children: list[Any]) -> Any:
        effect, subject, globs, *rest = children
        message, code = self._message_and_code(rest)
        rule = ast.ListRule(effect, subject, globs, message, code, span=self._span(meta))
        return self._acknowledged(rule, rest)

    # -- flow rules ------------------------------------------------------------

    def server_map(self, meta: Meta, children: list[Any]) -> ast.ServerMap:
        name, globs = children
        tools = globs if isinstance(globs, tuple) else (globs,)
        return ast.ServerMap(str(name), tuple(str(t) for t in tools), span=self._span(meta))

    def flow_scope(self, meta: Meta, children: list[Any]) -> ast.PathRef:
        return self._path(children[0])

    def flow_label(self, meta: Meta, children: list[Any]) -> str:
        return str(children[0])

    def flow_patterns(self, meta: Meta, children: list[Any]) -> tuple[ast.PatternRef, ...]:
        return tuple(children)

    def remember_rule(self, meta: Meta, children: list[Any]) -> Any:
        patterns = [c for c in children if isinstance(c, ast.PatternName | ast.RegexLiteral)]
        scope = next((c for c in children if isinstance(c, ast.PathRef)), None)
        label = next(c for c in children if isinstance(c, Token) and c.type == "IDENT")
        _, code = self._message_and_code(children)
        rule = ast.Remember(tuple(patterns), str(label), scope, code, span=self._span(meta))
        return self._acknowledged(rule, children)

    def flow_across(self, meta: Meta, children: list[Any]) -> _Servers:
        return _Servers((), ())

    def flow_from(self, meta: Meta, children: list[Any]) -> _Servers:
        sources, destinations = children
        return _Servers(sources, destinations or ())

    def flow_to(self, meta: Meta, children: list[Any]) -> _Servers:
        return _Servers((), children[0])

    def server_names(self, meta: Meta, children: list[Any]) -> tuple[str, ...]:
        return tuple(str(name) for name in children)

    def flow_rule(self, meta: Meta, children: list[Any]) -> Any:
        severity, subject, scope, servers, *rest = children
        message, code = self._message_and_code(rest)
        label = subject if isinstance(subject, str) else None
        patterns = subject if isinstance(subject, tuple) else ()
        rule = ast.FlowRule(
            severity,
            patterns,
            label,
            scope,
            message,
            code,
            span=self._span(meta),
            sources=servers.sources,
            destinations=servers.destinations,
        )
        return self._acknowledged(rule, rest)

    def limit_size(self, meta: Meta, children: list[Any]) -> Any:
        number, unit, *rest = children
        message, code = self._message_and_code(rest)
        rule = ast.LimitRule(
            "size", self._number(number), None, unit, message, code, span=self._span(meta)
        )
        return self._acknowledged(rule, rest)

    def _limit_path(self, kind: str, meta: Meta, children: list[Any]) -> Any:
        path, number, *rest = children
        message, code = self._message_and_code(rest)
        rule = ast.LimitRule(
            kind,  # type: ignore[arg-type]
            self._number(number),
            self._path(path),
            None,
            message,
            code,
            span=self._span(meta),
        )
        return self._acknowledged(rule, rest)

    def limit_length(self, meta: Meta, children: list[Any]) -> Any:
        return self._limit_path("length", meta, children)

    def limit_count(self, meta: Meta, children: list[Any]) -> Any:
        return self._limit_path("count", meta, children)

    # -- rate limits and quotas ------------------------------------------------

    def rate_window(self, meta: Meta, children: list[Any]) -> _Window:
        per, unit = children
        return _Window(None if per is None else self._number(per), str(unit))

    def rate_keys(self, meta: Meta, children: list[Any]) -> _Keys:
        return _Keys(tuple(children))

    def rate_failing(self, meta: Meta, children: list[Any]) -> _FailingOpen:
        return _FailingOpen()

    def _rate(
        self, kind: str, amount: Token | None, number: Token, meta: Meta, rest: list[Any]
    ) -> Any:
        window = next(c for c in rest if isinstance(c, _Window))
        keys = next((c.keys for c in rest if isinstance(c, _Keys)), ())
        guard = next((c for c in rest if isinstance(c, ast.Guard)), None)
        message, code = self._message_and_code(rest)
        rule = ast.RateLimit(
            kind,  # type: ignore[arg-type]
            self._number(number),
            window.unit,
            window.per,
            None if amount is None else self._path(amount),
            keys,
            guard,
            any(isinstance(c, _FailingOpen) for c in rest),
            message,
            code,
            span=self._span(meta),
        )
        return self._acknowledged(rule, rest)

    def test_calls(self, meta: Meta, children: list[Any]) -> ast.Calls:
        count, per, unit = children
        return ast.Calls(
            self._number(count),
            None if per is None else self._number(per),
            None if unit is None else str(unit),
            span=self._span(meta),
        )

    def rate_limit(self, meta: Meta, children: list[Any]) -> Any:
        number, *rest = children
        return self._rate("rate", None, number, meta, rest)

    def total_limit(self, meta: Meta, children: list[Any]) -> Any:
        path, number, *rest = children
        return self._rate("total", path, number, meta, rest)

    # -- mutator rules -------------------------------------------------------

    def _path(self, token: Token) -> ast.PathRef:
        return ast.PathRef(str(token), span=self._tspan(token))

    def matching(self, meta: Meta, children: list[Any]) -> tuple[ast.PatternRef, ...]:
        return tuple(children)

    def replacement(self, meta: Meta, children: list[Any]) -> _Replacement:
        return _Replacement(self._string(children[0]))

    def keep(self, meta: Meta, children: list[Any]) -> _Keep:
        return _Keep(self._number(children[0]))

    def guard(self, meta: Meta, children: list[Any]) -> ast.Guard:
        word, condition = children
        return ast.Guard(condition, unless=word == "unless", span=self._span(meta))

    def redact_rule(self, meta: Meta, children: list[Any]) -> Any:
        *children, ack = children
        path, patterns, replacement, guard, code = children
        rule = ast.Redact(
            self._path(path),
            patterns or (),
            None if replacement is None else replacement.text,
            guard,
            _code_name(code),
            span=self._span(meta),
        )
        return self._acknowledged(rule, [ack])

    def mask_rule(self, meta: Meta, children: list[Any]) -> Any:
        *children, ack = children
        path, patterns, keep, replacement, guard, code = children
        rule = ast.Mask(
            self._path(path),
            patterns or (),
            None if keep is None else keep.count,
            None if replacement is None else replacement.text,
            guard,
            _code_name(code),
            span=self._span(meta),
        )
        return self._acknowledged(rule, [ack])

    def hash_rule(self, meta: Meta, children: list[Any]) -> Any:
        *children, ack = children
        path, patterns, guard, code = children
        rule = ast.Hash(
            self._path(path), patterns or (), guard, _code_name(code), span=self._span(meta)
        )
        return self._acknowledged(rule, [ack])

    def set_rule(self, meta: Meta, children: list[Any]) -> Any:
        *children, ack = children
        path, value, guard, code = children
        rule = ast.SetValue(self._path(path), value, guard, _code_name(code), span=self._span(meta))
        return self._acknowledged(rule, [ack])

    def remove_rule(self, meta: Meta, children: list[Any]) -> Any:
        *children, ack = children
        path, guard, code = children
        rule = ast.Remove(self._path(path), guard, _code_name(code), span=self._span(meta))
        return self._acknowledged(rule, [ack])

    def truncate_rule(self, meta: Meta, children: list[Any]) -> Any:
        *children, ack = children
        path, length, replacement, guard, code = children
        rule = ast.Truncate(
            self._path(path),
            self._number(length),
            None if replacement is None else replacement.text,
            guard,
            _code_name(code),
            span=self._span(meta),
        )
        return self._acknowledged(rule, [ack])

    # -- conditions ----------------------------------------------------------

    def or_(self, meta: Meta, children: list[Any]) -> ast.Or:
        operands, depth = self._flat(ast.Or, children)
        return self._record(ast.Or(operands, span=self._span(meta)), meta, "condition", depth)

    def and_(self, meta: Meta, children: list[Any]) -> ast.And:
        operands, depth = self._flat(ast.And, children)
        return self._record(ast.And(operands, span=self._span(meta)), meta, "condition", depth)

    def _flat(self, kind: type, children: list[Any]) -> tuple[tuple[Any, ...], int]:
        """A chain's operands, with a parenthesized chain of the same kind in front spliced in
        (`(a and b) and c` is one `and`); and the depth of the node they make."""
        first, *rest = children
        depth = 1 + max(map(self._depth_of, rest))
        if isinstance(first, kind):
            return (*first.operands, *rest), max(self._depth_of(first), depth)  # type: ignore[attr-defined]
        return tuple(children), max(depth, 1 + self._depth_of(first))

    def not_(self, meta: Meta, children: list[Any]) -> ast.Not:
        return self._nested(
            ast.Not(children[0], span=self._span(meta)), meta, "condition", children[0]
        )

    def compare(self, meta: Meta, children: list[Any]) -> ast.Compare:
        quantifier, left, op, right = children
        node = ast.Compare(str(op), left, right, quantifier, span=self._span(meta))  # type: ignore[arg-type]
        return self._nested(node, meta, "condition", left, right)

    def matches(self, meta: Meta, children: list[Any]) -> ast.Matches:
        quantifier, subject, pattern = children
        node = ast.Matches(subject, pattern, quantifier, span=self._span(meta))
        return self._nested(node, meta, "condition", subject)

    def not_matches(self, meta: Meta, children: list[Any]) -> ast.Matches:
        quantifier, subject, pattern = children
        return ast.Matches(subject, pattern, quantifier, negated=True, span=self._span(meta))

    def like(self, meta: Meta, children: list[Any]) -> ast.Like:
        quantifier, subject, globs = children
        node = ast.Like(subject, globs, quantifier, span=self._span(meta))
        return self._nested(node, meta, "condition", subject)

    def not_like(self, meta: Meta, children: list[Any]) -> ast.Like:
        quantifier, subject, globs = children
        return ast.Like(subject, globs, quantifier, negated=True, span=self._span(meta))

    def text_predicate(self, meta: Meta, children: list[Any]) -> ast.TextTest:
        quantifier, function, subject, needle = children
        return ast.TextTest(function, subject, needle, quantifier, span=self._span(meta))

    def in_(self, meta: Meta, children: list[Any]) -> ast.In:
        quantifier, subject, container = children
        node = ast.In(subject, container, False, quantifier, span=self._span(meta))
        return self._nested(node, meta, "condition", subject, container)

    def not_in(self, meta: Meta, children: list[Any]) -> ast.In:
        quantifier, subject, container = children
        node = ast.In(subject, container, True, quantifier, span=self._span(meta))
        return self._nested(node, meta, "condition", subject, container)

    def is_type(self, meta: Meta, children: list[Any]) -> ast.IsType:
        quantifier, subject, type_name = children
        node = ast.IsType(subject, type_name, quantifier, span=self._span(meta))
        return self._nested(node, meta, "condition", subject)

    def exists(self, meta: Meta, children: list[Any]) -> ast.Exists:
        return ast.Exists(self._path(children[0]), span=self._span(meta))

    def missing(self, meta: Meta, children: list[Any]) -> ast.Exists:
        return ast.Exists(self._path(children[0]), negated=True, span=self._span(meta))

    def always(self, meta: Meta, children: list[Any]) -> ast.Constant:
        return ast.Constant(True, span=self._span(meta))

    def never(self, meta: Meta, children: list[Any]) -> ast.Constant:
        return ast.Constant(False, span=self._span(meta))

    # -- operands ------------------------------------------------------------

    def path_ref(self, meta: Meta, children: list[Any]) -> ast.PathRef:
        return self._path(children[0])

    def event_ref(self, meta: Meta, children: list[Any]) -> ast.EventRef:
        return ast.EventRef(span=self._span(meta))

    def phase_ref(self, meta: Meta, children: list[Any]) -> ast.PhaseRef:
        return ast.PhaseRef(span=self._span(meta))

    def context_ref(self, meta: Meta, children: list[Any]) -> ast.ContextRef:
        return ast.ContextRef(tuple(str(c) for c in children), span=self._span(meta))

    def param_ref(self, meta: Meta, children: list[Any]) -> ast.ParamRef:
        return ast.ParamRef(str(children[0]), span=self._span(meta))

    def call(self, meta: Meta, children: list[Any]) -> ast.Call:
        function, argument = children
        node = ast.Call(function, argument, span=self._span(meta))
        return self._nested(node, meta, "function call", argument)

    def glob_one(self, meta: Meta, children: list[Any]) -> tuple[str, ...]:
        return (self._string(children[0]),)

    def string_list(self, meta: Meta, children: list[Any]) -> tuple[str, ...]:
        return tuple(self._string(c) for c in children if c is not None)

    def pattern_name(self, meta: Meta, children: list[Any]) -> ast.PatternName:
        return ast.PatternName(str(children[0]), span=self._span(meta))

    def pattern_regex(self, meta: Meta, children: list[Any]) -> ast.RegexLiteral:
        return self._regex(children[0])

    # -- literals (operands) and JSON values (tests) share these -------------

    def string(self, meta: Meta, children: list[Any]) -> ast.Literal_:
        return ast.Literal_(self._string(children[0]), span=self._span(meta))

    def number(self, meta: Meta, children: list[Any]) -> ast.Literal_:
        return ast.Literal_(self._number(children[0]), span=self._span(meta))

    def true(self, meta: Meta, children: list[Any]) -> ast.Literal_:
        return ast.Literal_(True, span=self._span(meta))

    def false(self, meta: Meta, children: list[Any]) -> ast.Literal_:
        return ast.Literal_(False, span=self._span(meta))

    def null(self, meta: Meta, children: list[Any]) -> ast.Literal_:
        return ast.Literal_(None, span=self._span(meta))

    def list_literal(self, meta: Meta, children: list[Any]) -> ast.Literal_:
        present = [c for c in children if c is not None]
        node = ast.Literal_(tuple(c.value for c in present), span=self._span(meta))
        return self._nested(node, meta, "list", *present)

    def json_object(self, meta: Meta, children: list[Any]) -> ast.Literal_:
        members = [c for c in children if c is not None]
        node = ast.Literal_({k: v for k, v in members}, span=self._span(meta))
        return self._nested(node, meta, "JSON value", *members)

    def json_member(self, meta: Meta, children: list[Any]) -> tuple[str, Any]:
        key, value = children
        return self._same_depth((self._string(key), _plain(value)), value)

    def json_array(self, meta: Meta, children: list[Any]) -> ast.Literal_:
        present = [c for c in children if c is not None]
        node = ast.Literal_([_plain(c) for c in present], span=self._span(meta))
        return self._nested(node, meta, "JSON value", *present)

    # -- tests ---------------------------------------------------------------

    def test_block(self, meta: Meta, children: list[Any]) -> ast.TestBlock:
        name, *statements = children
        return ast.TestBlock(self._string(name), tuple(statements), span=self._span(meta))

    def test_given(self, meta: Meta, children: list[Any]) -> ast.Given:
        event, phase, payload = children
        return ast.Given(str(event), phase, _plain(payload), span=self._span(meta))

    def test_context(self, meta: Meta, children: list[Any]) -> ast.TestContext:
        return ast.TestContext(_plain(children[0]), span=self._span(meta))

    def test_config(self, meta: Meta, children: list[Any]) -> ast.TestConfig:
        name, config = children
        return ast.TestConfig(str(name), _plain(config), span=self._span(meta))

    def test_only(self, meta: Meta, children: list[Any]) -> ast.Only:
        return ast.Only(tuple(str(c) for c in children), span=self._span(meta))

    def test_side(self, meta: Meta, children: list[Any]) -> ast.SideSetting:
        return ast.SideSetting(children[0], span=self._span(meta))

    def expect_decision(self, meta: Meta, children: list[Any]) -> ast.ExpectDecision:
        return ast.ExpectDecision(children[0], span=self._span(meta))

    def expect_message(self, meta: Meta, children: list[Any]) -> ast.ExpectMessage:
        return ast.ExpectMessage(self._string(children[0]), span=self._span(meta))

    def expect_code(self, meta: Meta, children: list[Any]) -> ast.ExpectCode:
        return ast.ExpectCode(str(children[0]), span=self._span(meta))

    def expect_payload(self, meta: Meta, children: list[Any]) -> ast.ExpectPayload:
        return ast.ExpectPayload(_plain(children[0]), span=self._span(meta))

    def expect_no_messages(self, meta: Meta, children: list[Any]) -> ast.ExpectNoMessages:
        return ast.ExpectNoMessages(span=self._span(meta))

    def expect_no_code(self, meta: Meta, children: list[Any]) -> ast.ExpectNoCode:
        return ast.ExpectNoCode(str(children[0]), span=self._span(meta))

    def expect_unchanged(self, meta: Meta, children: list[Any]) -> ast.ExpectUnchanged:
        path = children[0] if children else None
        return ast.ExpectUnchanged(
            None if path is None else self._path(path), span=self._span(meta)
        )


def _plain(value: Any) -> Any:
    """JSON values arrive wrapped as literals; tests want plain Python data."""
    if isinstance(value, ast.Literal_):
        inner = value.value
        return list(inner) if isinstance(inner, tuple) else inner
    return value


def _code_name(code: _Code | None) -> str | None:
    return None if code is None else code.name


def _flatten(items: list[Any]) -> list[Any]:
    out: list[Any] = []
    for item in items:
        out.extend(item if isinstance(item, list) else [item])
    return out


class _Priority:
    def __init__(
        self,
        keyword: Token,
        both: int | float | None,
        per_phase: tuple[tuple[ast.PhaseName, int | float], ...],
    ) -> None:
        self.keyword = keyword
        self.both = both
        self.per_phase = per_phase


class _Header:
    def __init__(self, field: str, value: str) -> None:
        self.field = field
        self.value = value


class _Code:
    def __init__(self, name: str) -> None:
        self.name = name


class _Replacement:
    def __init__(self, text: str) -> None:
        self.text = text


class _Keep:
    def __init__(self, count: int | float) -> None:
        self.count = count


class _Servers:
    """A flow rule's servers: the sources and destinations it is narrowed to (empty: any)."""

    def __init__(self, sources: tuple[str, ...], destinations: tuple[str, ...]) -> None:
        self.sources = sources
        self.destinations = destinations


def build(
    tree: Tree[Token], file: str, max_nesting: int = DEFAULT_MAX_NESTING
) -> tuple[ast.Item, ...]:
    return cast(tuple[ast.Item, ...], AstBuilder(file, max_nesting).transform(tree))


class _Window:
    def __init__(self, per: int | float | None, unit: str) -> None:
        self.per = per
        self.unit = unit


class _Keys:
    def __init__(self, keys: tuple[ast.Operand, ...]) -> None:
        self.keys = keys


class _FailingOpen:
    """`failing open` on a rate limit."""

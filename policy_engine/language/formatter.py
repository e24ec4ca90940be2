"""The canonical layout of a policy file, printed from the AST plus its comments.

Like gofmt, there is one layout and no options, so diffs show only real
changes. The printer works from the AST (not the text) so it can never change
meaning: ``parse(format(x))`` equals ``parse(x)`` and formatting is idempotent.
Comments are not in the tree; they are attached to nodes by their spans: an
own-line comment leads the next node, a comment after code trails that node,
and a comment inside a construct that is printed on one line moves above it.

The ``render_*`` helpers print one operand, condition or rule on one line, so
explain traces and error messages show a rule exactly as ``policyc fmt`` would.
"""

from __future__ import annotations

import json
import math
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import singledispatch
from typing import Any, TypeVar

from . import ast
from .diagnostics import Diagnostic, Span
from .hidden import json_escape, regex_escape
from .limits import SourceLimits
from .parser import parse_source

__all__ = [
    "INDENT",
    "MAX_WIDTH",
    "FormatError",
    "FormatOutcome",
    "format_policy",
    "format_source",
    "render_condition",
    "render_operand",
    "render_rule",
]

INDENT = "  "
MAX_WIDTH = 100
TRAILING_GAP = "  "


class FormatError(ValueError):
    """A tree holds a value the language cannot spell (NaN, a newline in a regex...)."""


@dataclass(frozen=True)
class FormatOutcome:
    """The formatted text, or ``None`` and the parse diagnostics."""

    text: str | None
    diagnostics: tuple[Diagnostic, ...]


def format_source(
    text: str, file: str = "<string>", limits: SourceLimits | None = None
) -> FormatOutcome:
    """Parse then format; a file that does not parse is reported, never guessed at."""
    outcome = parse_source(text, file, limits)
    if outcome.file is None:
        return FormatOutcome(None, outcome.diagnostics)
    return FormatOutcome(format_policy(outcome.file), outcome.diagnostics)


def format_policy(file: ast.PolicyFile) -> str:
    """The canonical text of ``file``: every item, every comment, one trailing newline."""
    slots, tail = _distribute(file.items, list(file.comments))
    chunks = _chunks(file.items, slots, tail, _item_lines)
    lines = _join(chunks, indent="", blank_after_node=True)
    return "\n".join(lines) + "\n" if lines else ""


# ------------------------------------------------------------------ scalars


def _string(text: str) -> str:
    """JSON spelling; characters that do not show as themselves stay escapes (Trojan Source)."""
    return json_escape(json.dumps(text, ensure_ascii=False))


def _number(value: int | float) -> str:
    """``repr`` keeps ints ints and floats floats (``1.0``, ``1e+21``) in NUMBER syntax."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FormatError(f"not a number: {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise FormatError(f"the language has no spelling for {value!r}")
    return repr(value)


def _regex(regex: ast.RegexLiteral) -> str:
    if "\n" in regex.source or not regex.source or regex.source.startswith("*"):
        raise FormatError(f"regex source {regex.source!r} cannot be written as /.../")
    return "/" + regex_escape(regex.source).replace("/", "\\/") + "/" + regex.flags


def _literal(value: Any) -> str:
    """A literal value: strings, numbers, booleans, null and (nested) lists."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return _number(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    raise FormatError(f"not a literal: {value!r}")


def _string_list(items: Sequence[str]) -> str:
    return "[" + ", ".join(_string(s) for s in items) + "]"


def _globs(globs: tuple[str, ...] | ast.ParamRef, *, bare_single: bool) -> str:
    if isinstance(globs, ast.ParamRef):
        return render_operand(globs)
    if bare_single and len(globs) == 1:
        return _string(globs[0])
    return _string_list(globs)


def _pattern(pattern: ast.PatternRef) -> str:
    return pattern.name if isinstance(pattern, ast.PatternName) else _regex(pattern)


def _json_inline(value: Any) -> str:
    return json_escape(json.dumps(value, ensure_ascii=False, allow_nan=False))


# ----------------------------------------------------------------- operands


def render_operand(op: ast.Operand) -> str:
    """One operand as written in a condition: ``$.a``, ``context.x.y``, ``length($.a)``."""
    return _operand(op)


@singledispatch
def _operand(op: object) -> str:
    raise FormatError(f"not an operand: {op!r}")


@_operand.register
def _path(op: ast.PathRef) -> str:
    return op.source


@_operand.register
def _event(op: ast.EventRef) -> str:
    return "event"


@_operand.register
def _phase(op: ast.PhaseRef) -> str:
    return "phase"


@_operand.register
def _context(op: ast.ContextRef) -> str:
    return ".".join(("context", *op.parts))


@_operand.register
def _param(op: ast.ParamRef) -> str:
    return f"param.{op.name}"


@_operand.register
def _call(op: ast.Call) -> str:
    return f"{op.function}({render_operand(op.argument)})"


@_operand.register
def _literal_operand(op: ast.Literal_) -> str:
    return _literal(op.value)


# --------------------------------------------------------------- conditions

# Loosest first: or < and < not < predicates. A child is wrapped in parentheses
# only when it binds more loosely than its position allows.
_OR, _AND, _NOT, _ATOM = 1, 2, 3, 4


def _precedence(cond: ast.Condition) -> int:
    if isinstance(cond, ast.Or):
        return _OR
    if isinstance(cond, ast.And):
        return _AND
    if isinstance(cond, ast.Not):
        return _NOT
    return _ATOM


def _operand_of(cond: ast.Condition, tightest_allowed: int) -> str:
    text = render_condition(cond)
    return f"({text})" if _precedence(cond) < tightest_allowed else text


def _quantified(quantifier: ast.Quantifier, subject: ast.Operand, rest: str) -> str:
    prefix = f"{quantifier} " if quantifier else ""
    return f"{prefix}{render_operand(subject)} {rest}"


def render_condition(cond: ast.Condition) -> str:
    """A condition on one line with the fewest parentheses that keep its tree."""
    return _condition(cond)


@singledispatch
def _condition(cond: object) -> str:
    raise FormatError(f"not a condition: {cond!r}")


@_condition.register
def _or(cond: ast.Or) -> str:
    # A nested `or` needs parens even on the left: the parser flattens `a or b or c`.
    return " or ".join(_operand_of(c, _AND) for c in _at_least_two(cond.operands, "or"))


@_condition.register
def _and(cond: ast.And) -> str:
    return " and ".join(_operand_of(c, _NOT) for c in _at_least_two(cond.operands, "and"))


@_condition.register
def _not(cond: ast.Not) -> str:
    return "not " + _operand_of(cond.operand, _NOT)


@_condition.register
def _compare(cond: ast.Compare) -> str:
    return _quantified(cond.quantifier, cond.left, f"{cond.op} {render_operand(cond.right)}")


@_condition.register
def _matches(cond: ast.Matches) -> str:
    word = "not matches" if cond.negated else "matches"
    return _quantified(cond.quantifier, cond.subject, f"{word} {_pattern(cond.pattern)}")


@_condition.register
def _like(cond: ast.Like) -> str:
    globs = _globs(cond.globs, bare_single=True)
    word = "not like" if cond.negated else "like"
    return _quantified(cond.quantifier, cond.subject, f"{word} {globs}")


@_condition.register
def _text_test(cond: ast.TextTest) -> str:
    quantifier = f"{cond.quantifier} " if cond.quantifier else ""
    arguments = f"{render_operand(cond.subject)}, {render_operand(cond.needle)}"
    return f"{quantifier}{cond.function}({arguments})"


@_condition.register
def _in(cond: ast.In) -> str:
    word = "not in" if cond.negated else "in"
    return _quantified(cond.quantifier, cond.subject, f"{word} {render_operand(cond.container)}")


@_condition.register
def _is_type(cond: ast.IsType) -> str:
    return _quantified(cond.quantifier, cond.subject, f"is {cond.type_name}")


@_condition.register
def _exists(cond: ast.Exists) -> str:
    return f"{'missing' if cond.negated else 'exists'} {cond.path.source}"


@_condition.register
def _constant(cond: ast.Constant) -> str:
    return "true" if cond.value else "false"


def _at_least_two(operands: tuple[ast.Condition, ...], word: str) -> tuple[ast.Condition, ...]:
    if len(operands) < 2:
        raise FormatError(f"`{word}` needs at least two operands, got {len(operands)}")
    return operands


# --------------------------------------------------------------- statements


def _message_code(message: str | None, code: str | None) -> str:
    text = "" if message is None else f" {_string(message)}"
    return text if code is None else f"{text} code {code}"


def _acknowledged(rule: ast.Rule) -> str:
    return f" acknowledge {', '.join(rule.acknowledged)}" if rule.acknowledged else ""


def _guard(guard: ast.Guard | None) -> str:
    if guard is None:
        return ""
    return f" {'unless' if guard.unless else 'if'} {render_condition(guard.condition)}"


def _matching(patterns: tuple[ast.PatternRef, ...]) -> str:
    return f" matching {', '.join(_pattern(p) for p in patterns)}" if patterns else ""


def _with(replacement: str | None) -> str:
    return "" if replacement is None else f" with {_string(replacement)}"


@singledispatch
def _statement(stmt: object) -> str:
    """One interceptor statement on one line, without indentation or comments."""
    raise FormatError(f"not a statement: {stmt!r}")


def render_rule(rule: ast.Rule) -> str:
    """A validator or mutator rule on one line, exactly as the formatter prints it."""
    return _statement(rule)


@_statement.register
def _acknowledge(stmt: ast.Acknowledge) -> str:
    reason = "" if stmt.reason is None else f" {_string(stmt.reason)}"
    return f"acknowledge {', '.join(stmt.codes)}{reason}"


@_statement.register
def _hook(stmt: ast.Hook) -> str:
    events = ", ".join(e.name for e in stmt.events)
    priority = "" if stmt.priority is None else f" priority {_number(stmt.priority)}"
    return f"on {events} {stmt.phases}{priority}"


@_statement.register
def _description(stmt: ast.Description) -> str:
    return f"description {_string(stmt.text)}"


@_statement.register
def _version(stmt: ast.Version) -> str:
    return f"version {_string(stmt.text)}"


@_statement.register
def _mode(stmt: ast.ModeSetting) -> str:
    return f"mode {stmt.mode}"


@_statement.register
def _fail(stmt: ast.FailSetting) -> str:
    return f"fail {'open' if stmt.open else 'closed'}"


@_statement.register
def _priority(stmt: ast.PrioritySetting) -> str:
    if stmt.both is not None and not stmt.per_phase:
        return f"priority {_number(stmt.both)}"
    if stmt.both is None and 1 <= len(stmt.per_phase) <= 2:
        return "priority " + " ".join(f"{p} {_number(n)}" for p, n in stmt.per_phase)
    raise FormatError("a priority is one number or one or two `PHASE NUMBER` pairs")


@_statement.register
def _compat(stmt: ast.CompatSetting) -> str:
    upper = "" if stmt.max_protocol is None else f" .. {_string(stmt.max_protocol)}"
    return f"compat {_string(stmt.min_protocol)}{upper}"


@_statement.register
def _param_def(stmt: ast.ParamDef) -> str:
    default = "" if stmt.default is None else f" = {_literal(stmt.default.value)}"
    return f"param {stmt.name}: {stmt.type}{default}"


@_statement.register
def _check(rule: ast.CheckRule) -> str:
    word = "unless" if rule.unless else "if"
    condition = render_condition(rule.condition)
    rest = _message_code(rule.message, rule.code) + _acknowledged(rule)
    return f"{rule.severity} {word} {condition}{rest}"


@_statement.register
def _list_rule(rule: ast.ListRule) -> str:
    globs = _globs(rule.globs, bare_single=False)
    rest = _message_code(rule.message, rule.code) + _acknowledged(rule)
    return f"{rule.effect} {rule.subject} {globs}{rest}"


@_statement.register
def _server_map(stmt: ast.ServerMap) -> str:
    return f"server {stmt.server} tools {_string_list(stmt.tools)}"


def _scope(path: ast.PathRef | None) -> str:
    return "" if path is None else f" in {path.source}"


@_statement.register
def _remember(rule: ast.Remember) -> str:
    patterns = ", ".join(_pattern(p) for p in rule.patterns)
    rest = _message_code(None, rule.code) + _acknowledged(rule)
    return f"remember {patterns}{_scope(rule.path)} as {rule.label}{rest}"


@_statement.register
def _flow(rule: ast.FlowRule) -> str:
    subject = rule.label or ", ".join(_pattern(p) for p in rule.patterns)
    rest = _message_code(rule.message, rule.code) + _acknowledged(rule)
    return f"{rule.severity} flow {subject}{_scope(rule.path)} {_flow_servers(rule)}{rest}"


def _flow_servers(rule: ast.FlowRule) -> str:
    if not rule.sources and not rule.destinations:
        return "across servers"
    sources = f"from {', '.join(rule.sources)}" if rule.sources else ""
    destinations = f"to {', '.join(rule.destinations)}" if rule.destinations else ""
    return " ".join(part for part in (sources, destinations) if part)


@_statement.register
def _limit(rule: ast.LimitRule) -> str:
    if rule.kind == "size":
        target = _number(rule.limit) + ("" if rule.unit is None else f" {rule.unit}")
    elif rule.path is not None:
        target = f"{rule.path.source} {_number(rule.limit)}"
    else:
        raise FormatError(f"`limit {rule.kind}` needs a path")
    rest = _message_code(rule.message, rule.code) + _acknowledged(rule)
    return f"limit {rule.kind} {target}{rest}"


@_statement.register
def _rate(rule: ast.RateLimit) -> str:
    amount = "" if rule.amount is None else f"{rule.amount.source} "
    per = "" if rule.per is None else f"{_number(rule.per)} "
    keys = f" by {', '.join(render_operand(k) for k in rule.keys)}" if rule.keys else ""
    failing = " failing open" if rule.fail_open else ""
    rest = _message_code(rule.message, rule.code) + _acknowledged(rule)
    head = f"limit {rule.kind} {amount}{_number(rule.limit)} per {per}{rule.unit}"
    return f"{head}{keys}{_guard(rule.guard)}{failing}{rest}"


@_statement.register
def _redact(rule: ast.Redact) -> str:
    options = _matching(rule.patterns) + _with(rule.replacement) + _guard(rule.guard)
    return (
        f"redact {rule.path.source}{options}{_message_code(None, rule.code)}{_acknowledged(rule)}"
    )


@_statement.register
def _mask(rule: ast.Mask) -> str:
    keep = "" if rule.keep is None else f" keep {_number(rule.keep)}"
    options = _matching(rule.patterns) + keep + _with(rule.replacement) + _guard(rule.guard)
    return f"mask {rule.path.source}{options}{_message_code(None, rule.code)}{_acknowledged(rule)}"


@_statement.register
def _hash(rule: ast.Hash) -> str:
    options = _matching(rule.patterns) + _guard(rule.guard) + _message_code(None, rule.code)
    return f"hash {rule.path.source}{options}{_acknowledged(rule)}"


@_statement.register
def _set(rule: ast.SetValue) -> str:
    options = _guard(rule.guard) + _message_code(None, rule.code) + _acknowledged(rule)
    return f"set {rule.path.source} = {render_operand(rule.value)}{options}"


@_statement.register
def _remove(rule: ast.Remove) -> str:
    options = _guard(rule.guard) + _message_code(None, rule.code) + _acknowledged(rule)
    return f"remove {rule.path.source}{options}"


@_statement.register
def _truncate(rule: ast.Truncate) -> str:
    options = _with(rule.replacement) + _guard(rule.guard) + _message_code(None, rule.code)
    return f"truncate {rule.path.source} to {_number(rule.length)}{options}{_acknowledged(rule)}"


# ---------------------------------------------------------- test statements

# A test statement is a head and at most one JSON payload; the payload is laid
# out separately because only it may need more than one line.
_TestParts = tuple[str, tuple[Any, ...]]


@singledispatch
def _test_parts(stmt: object) -> _TestParts:
    raise FormatError(f"not a test statement: {stmt!r}")


@_test_parts.register
def _given(stmt: ast.Given) -> _TestParts:
    return f"given {stmt.event} {stmt.phase}", (stmt.payload,)


@_test_parts.register
def _test_context(stmt: ast.TestContext) -> _TestParts:
    return "context", (stmt.context,)


@_test_parts.register
def _test_config(stmt: ast.TestConfig) -> _TestParts:
    return f"config {stmt.interceptor}", (stmt.config,)


@_test_parts.register
def _only(stmt: ast.Only) -> _TestParts:
    return f"only {', '.join(stmt.names)}", ()


@_test_parts.register
def _side(stmt: ast.SideSetting) -> _TestParts:
    return f"side {stmt.side}", ()


@_test_parts.register
def _expect_decision(stmt: ast.ExpectDecision) -> _TestParts:
    return f"expect {stmt.decision}", ()


@_test_parts.register
def _expect_message(stmt: ast.ExpectMessage) -> _TestParts:
    return f"expect message {_string(stmt.text)}", ()


@_test_parts.register
def _expect_code(stmt: ast.ExpectCode) -> _TestParts:
    return f"expect code {stmt.code}", ()


@_test_parts.register
def _expect_no_code(stmt: ast.ExpectNoCode) -> _TestParts:
    return f"expect no code {stmt.code}", ()


@_test_parts.register
def _expect_unchanged(stmt: ast.ExpectUnchanged) -> _TestParts:
    return "expect unchanged" + ("" if stmt.path is None else f" {stmt.path.source}"), ()


@_test_parts.register
def _expect_payload(stmt: ast.ExpectPayload) -> _TestParts:
    return "expect payload", (stmt.payload,)


@_test_parts.register
def _calls(stmt: ast.Calls) -> _TestParts:
    per = "" if stmt.every_per is None else f"{_number(stmt.every_per)} "
    every = "" if stmt.every_unit is None else f" every {per}{stmt.every_unit}"
    return f"calls {_number(stmt.count)}{every}", ()


@_test_parts.register
def _expect_no_messages(stmt: ast.ExpectNoMessages) -> _TestParts:
    return "expect no messages", ()


def _test_statement_lines(stmt: ast.TestStatement) -> list[str]:
    """One line, or a pretty-printed payload when the line would pass ``MAX_WIDTH``."""
    head, payloads = _test_parts(stmt)
    if not payloads:
        return [head]
    inline = f"{head} {_json_inline(payloads[0])}"
    if len(INDENT) + len(inline) <= MAX_WIDTH:
        return [inline]
    pretty = json_escape(json.dumps(payloads[0], ensure_ascii=False, allow_nan=False, indent=2))
    first, *rest = pretty.split("\n")
    return [f"{head} {first}", *rest]


# ------------------------------------------------------------ comment slots


@dataclass
class _Slot:
    """The comments attached to one node; block-only fields stay empty elsewhere."""

    leading: list[ast.Comment] = field(default_factory=list)
    trailing: ast.Comment | None = None
    header: ast.Comment | None = None
    children: list[_Slot] = field(default_factory=list)
    dangling: list[ast.Comment] = field(default_factory=list)


_Node = ast.Item | ast.Statement | ast.TestStatement
_Position = tuple[int, int]
_N = TypeVar("_N", bound=_Node)


def _start(span: Span) -> _Position:
    return (span.line, span.column)


def _end(span: Span) -> _Position:
    return (span.end_line, span.end_column)


def _distribute(
    nodes: Sequence[_Node], comments: list[ast.Comment]
) -> tuple[list[_Slot], list[ast.Comment]]:
    """Attach each comment to a sibling; also return those after the last sibling."""
    slots = [_Slot() for _ in nodes]
    inside: list[list[ast.Comment]] = [[] for _ in nodes]
    tail: list[ast.Comment] = []
    starts = [_start(node.span) for node in nodes]  # siblings are in source order
    for comment in sorted(comments, key=lambda c: _start(c.span)):
        at = _start(comment.span)
        index = bisect_right(starts, at) - 1  # the last sibling starting before it
        if index >= 0 and at < _end(nodes[index].span):
            inside[index].append(comment)
        elif index >= 0 and comment.span.line == nodes[index].span.end_line:
            _set_trailing(slots[index], comment)
        else:
            after = index + 1
            (slots[after].leading if after < len(nodes) else tail).append(comment)
    for node, slot, found in zip(nodes, slots, inside, strict=True):
        if isinstance(node, ast.Interceptor | ast.TestBlock):
            _attach_block(node, slot, found)
        else:
            slot.leading.extend(found)  # inside a one-line node: move above it
    return slots, tail


def _set_trailing(slot: _Slot, comment: ast.Comment) -> None:
    if slot.trailing is not None:  # only with made-up spans; keep both
        slot.leading.append(slot.trailing)
    slot.trailing = comment


def _attach_block(
    block: ast.Interceptor | ast.TestBlock, slot: _Slot, comments: list[ast.Comment]
) -> None:
    """Comments on the header line trail the header; the rest go to the statements."""
    statements: Sequence[_Node] = block.statements
    first = _start(statements[0].span) if statements else _end(block.span)
    body: list[ast.Comment] = []
    for comment in comments:
        on_header = comment.span.line == block.span.line and _start(comment.span) < first
        if on_header and slot.header is None:
            slot.header = comment
        elif on_header:
            slot.leading.append(comment)
        else:
            body.append(comment)
    slot.children, slot.dangling = _distribute(statements, body)


# ------------------------------------------------------------------- layout


@dataclass(frozen=True)
class _Chunk:
    """Lines printed together, with the source lines they came from (for blank lines)."""

    first: int
    last: int
    lines: tuple[str, ...]
    is_node: bool


def _comment_chunk(comment: ast.Comment, line: int) -> _Chunk:
    return _Chunk(line, line, (comment.text.rstrip(),), False)


def _chunks(
    nodes: Sequence[_N],
    slots: Sequence[_Slot],
    tail: Sequence[ast.Comment],
    render: Callable[[_N, _Slot], list[str]],
) -> list[_Chunk]:
    chunks: list[_Chunk] = []
    for node, slot in zip(nodes, slots, strict=True):
        start = node.span.line
        # A comment moved up from inside a node counts as sitting on its first line.
        chunks.extend(_comment_chunk(c, min(c.span.line, start)) for c in slot.leading)
        lines = render(node, slot)
        if slot.trailing is not None:
            lines[-1] += TRAILING_GAP + slot.trailing.text.rstrip()
        chunks.append(_Chunk(start, node.span.end_line, tuple(lines), True))
    chunks.extend(_comment_chunk(c, c.span.line) for c in tail)
    return chunks


def _join(chunks: Sequence[_Chunk], *, indent: str, blank_after_node: bool) -> list[str]:
    """Indent the chunks; one blank line where the source had any (or after a top-level node)."""
    lines: list[str] = []
    previous: _Chunk | None = None
    for chunk in chunks:
        if previous is not None and (
            chunk.first - previous.last > 1 or (blank_after_node and previous.is_node)
        ):
            lines.append("")
        lines.extend(indent + line for line in chunk.lines)
        previous = chunk
    return lines


def _item_lines(item: ast.Item, slot: _Slot) -> list[str]:
    if isinstance(item, ast.PatternDef):
        return [f"pattern {item.name} = {_regex(item.regex)}"]
    if isinstance(item, ast.EventDecl):
        return ["event " + ", ".join(e.name for e in item.events)]
    if isinstance(item, ast.Interceptor):
        body = _chunks(item.statements, slot.children, slot.dangling, _statement_lines)
        return _block(_interceptor_header(item), body, slot)
    body = _chunks(item.statements, slot.children, slot.dangling, _test_lines)
    return _block(f"test {_string(item.name)}", body, slot)


def _interceptor_header(item: ast.Interceptor) -> str:
    header = f"{item.kind} {item.name}"
    if item.description is not None:
        header += f" {_string(item.description)}"
    if item.version is not None:
        header += f" version {_string(item.version)}"
    return header


def _block(header: str, body: list[_Chunk], slot: _Slot) -> list[str]:
    """``HEADER {`` ... ``}``; an empty block with no header comment prints as ``{}``."""
    if not body and slot.header is None:
        return [f"{header} {{}}"]
    first = f"{header} {{"
    if slot.header is not None:
        first += TRAILING_GAP + slot.header.text.rstrip()
    return [first, *_join(body, indent=INDENT, blank_after_node=False), "}"]


def _statement_lines(stmt: ast.Statement, slot: _Slot) -> list[str]:
    return [_statement(stmt)]


def _test_lines(stmt: ast.TestStatement, slot: _Slot) -> list[str]:
    return _test_statement_lines(stmt)

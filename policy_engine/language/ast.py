"""The policy language's abstract syntax tree.

Frozen dataclasses; every node carries a ``span`` that equality ignores, so
tests and the formatter's round-trip property compare trees structurally.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .diagnostics import UNKNOWN_SPAN, Span


def _span() -> Any:
    return field(default=UNKNOWN_SPAN, compare=False, repr=False, kw_only=True)


# ------------------------------------------------------------------ operands


@dataclass(frozen=True)
class PathRef:
    """A JSONPath into the event payload, kept as written; checked and compiled later.

    Inside a path filter, ``@``-rooted paths (``@.name``) read the element being tested.
    """

    source: str
    span: Span = _span()

    @property
    def relative(self) -> bool:
        return self.source.startswith("@")


@dataclass(frozen=True)
class EventRef:
    span: Span = _span()


@dataclass(frozen=True)
class PhaseRef:
    span: Span = _span()


@dataclass(frozen=True)
class ContextRef:
    """``context.principal.claims.roles`` -> parts ("principal", "claims", "roles")."""

    parts: tuple[str, ...]
    span: Span = _span()


@dataclass(frozen=True)
class ParamRef:
    name: str
    span: Span = _span()


FunctionName = Literal[
    "length",
    "size",
    "count",
    "lower",
    "upper",
    "url_decode",
    "normalize",
    "keys",
    "host",
    "scheme",
    "path",
]


@dataclass(frozen=True)
class Call:
    function: FunctionName
    argument: Operand
    span: Span = _span()


@dataclass(frozen=True)
class Literal_:
    """A literal; lists are tuples of plain values so nodes stay hashable."""

    value: Any
    span: Span = _span()


Operand = PathRef | EventRef | PhaseRef | ContextRef | ParamRef | Call | Literal_


# ----------------------------------------------------------------- patterns


@dataclass(frozen=True)
class PatternName:
    name: str
    span: Span = _span()


@dataclass(frozen=True)
class RegexLiteral:
    """``/source/flags``; ``source`` has ``\\/`` already turned back into ``/``."""

    source: str
    flags: str
    span: Span = _span()


PatternRef = PatternName | RegexLiteral


# --------------------------------------------------------------- conditions

Quantifier = Literal["any", "all"] | None
CompareOp = Literal["==", "!=", "<", "<=", ">", ">="]
TypeTest = Literal["string", "number", "int", "bool", "null", "object", "list"]


@dataclass(frozen=True)
class Compare:
    op: CompareOp
    left: Operand
    right: Operand
    quantifier: Quantifier = None
    span: Span = _span()


@dataclass(frozen=True)
class Matches:
    """``x matches P``; ``x not matches P`` (negated) holds for a candidate that does not."""

    subject: Operand
    pattern: PatternRef
    quantifier: Quantifier = None
    negated: bool = False
    span: Span = _span()


@dataclass(frozen=True)
class Like:
    """Glob match (``*`` and ``?``) against one or more globs or a list param.

    ``x not like G`` (negated) holds for a candidate that matches no glob, and
    names it, so an allow list's denial points at the value that broke it.
    """

    subject: Operand
    globs: tuple[str, ...] | ParamRef
    quantifier: Quantifier = None
    negated: bool = False
    span: Span = _span()


TextFunction = Literal["contains", "starts_with", "ends_with", "in_domain"]


@dataclass(frozen=True)
class TextTest:
    """``contains(x, s)``, ``starts_with(x, s)``, ``ends_with(x, s)``: substring tests;
    ``in_domain(h, d)``: host ``h`` is domain ``d`` or below it (``d`` may be a list)."""

    function: TextFunction
    subject: Operand
    needle: Operand
    quantifier: Quantifier = None
    span: Span = _span()


@dataclass(frozen=True)
class In:
    subject: Operand
    container: Operand
    negated: bool = False
    quantifier: Quantifier = None
    span: Span = _span()


@dataclass(frozen=True)
class IsType:
    subject: Operand
    type_name: TypeTest
    quantifier: Quantifier = None
    span: Span = _span()


@dataclass(frozen=True)
class Exists:
    path: PathRef
    negated: bool = False
    span: Span = _span()


@dataclass(frozen=True)
class Constant:
    value: bool
    span: Span = _span()


@dataclass(frozen=True)
class Not:
    operand: Condition
    span: Span = _span()


@dataclass(frozen=True)
class And:
    operands: tuple[Condition, ...]
    span: Span = _span()


@dataclass(frozen=True)
class Or:
    operands: tuple[Condition, ...]
    span: Span = _span()


Condition = Compare | Matches | Like | In | IsType | TextTest | Exists | Constant | Not | And | Or


@dataclass(frozen=True)
class Guard:
    """``if COND`` or ``unless COND`` on a rule."""

    condition: Condition
    unless: bool = False
    span: Span = _span()


# ------------------------------------------------------------- block settings

PhaseName = Literal["request", "response"]


@dataclass(frozen=True)
class EventName:
    name: str
    span: Span = _span()


@dataclass(frozen=True)
class Hook:
    events: tuple[EventName, ...]
    phases: Literal["request", "response", "both"]
    priority: int | float | None = None
    span: Span = _span()


@dataclass(frozen=True)
class Description:
    text: str
    span: Span = _span()


@dataclass(frozen=True)
class Version:
    text: str
    span: Span = _span()


@dataclass(frozen=True)
class ModeSetting:
    mode: Literal["active", "audit", "enforce"]
    span: Span = _span()


@dataclass(frozen=True)
class FailSetting:
    open: bool
    span: Span = _span()


@dataclass(frozen=True)
class PrioritySetting:
    """``priority N`` (both phases) or ``priority request N response M``."""

    both: int | float | None = None
    per_phase: tuple[tuple[PhaseName, int | float], ...] = ()
    span: Span = _span()


@dataclass(frozen=True)
class CompatSetting:
    min_protocol: str
    max_protocol: str | None = None
    span: Span = _span()


ScalarType = Literal["int", "number", "string", "bool"]


@dataclass(frozen=True)
class TypeRef:
    base: ScalarType
    is_list: bool = False
    span: Span = _span()

    def __str__(self) -> str:
        return f"list[{self.base}]" if self.is_list else self.base


@dataclass(frozen=True)
class ParamDef:
    name: str
    type: TypeRef
    default: Literal_ | None = None
    span: Span = _span()


# --------------------------------------------------------------------- rules

RuleSeverity = Literal["deny", "warn", "info"]


@dataclass(frozen=True)
class CheckRule:
    severity: RuleSeverity
    condition: Condition
    unless: bool = False
    message: str | None = None
    code: str | None = None
    acknowledged: tuple[str, ...] = ()
    span: Span = _span()


@dataclass(frozen=True)
class ListRule:
    """Sugar: ``allow tools [...]``, ``deny tools [...]``, ``allow models [...]``."""

    effect: Literal["allow", "deny"]
    subject: Literal["tools", "models"]
    globs: tuple[str, ...] | ParamRef
    message: str | None = None
    code: str | None = None
    acknowledged: tuple[str, ...] = ()
    span: Span = _span()


@dataclass(frozen=True)
class LimitRule:
    """Sugar: ``limit size 64 kb``, ``limit length PATH N``, ``limit count PATH N``."""

    kind: Literal["size", "length", "count"]
    limit: int | float
    path: PathRef | None = None
    unit: Literal["b", "kb", "mb"] | None = None
    message: str | None = None
    code: str | None = None
    acknowledged: tuple[str, ...] = ()
    span: Span = _span()


WINDOW_SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}


@dataclass(frozen=True)
class RateLimit:
    """``limit rate N per [K] UNIT [by KEYS] [if COND] [failing open]`` and
    ``limit total PATH N per ...``: a counter per key, kept in the limit store.

    A core rule (not sugar): it needs state, so the compiler lowers it itself."""

    kind: Literal["rate", "total"]
    limit: int | float
    unit: str
    """As written: ``minute`` or ``minutes``."""
    per: int | float | None = None
    """The window's multiple of ``unit`` (``per 10 minutes``); None when not written."""
    amount: PathRef | None = None
    keys: tuple[Operand, ...] = ()
    guard: Guard | None = None
    fail_open: bool = False
    message: str | None = None
    code: str | None = None
    acknowledged: tuple[str, ...] = ()
    span: Span = _span()

    @property
    def window_seconds(self) -> float:
        return (
            float(self.per if self.per is not None else 1)
            * WINDOW_SECONDS[self.unit.removesuffix("s")]
        )


@dataclass(frozen=True)
class Redact:
    path: PathRef
    patterns: tuple[PatternRef, ...] = ()
    replacement: str | None = None
    guard: Guard | None = None
    code: str | None = None
    acknowledged: tuple[str, ...] = ()
    span: Span = _span()


@dataclass(frozen=True)
class Mask:
    path: PathRef
    patterns: tuple[PatternRef, ...] = ()
    keep: int | float | None = None
    replacement: str | None = None
    guard: Guard | None = None
    code: str | None = None
    acknowledged: tuple[str, ...] = ()
    span: Span = _span()


@dataclass(frozen=True)
class Hash:
    path: PathRef
    patterns: tuple[PatternRef, ...] = ()
    guard: Guard | None = None
    code: str | None = None
    acknowledged: tuple[str, ...] = ()
    span: Span = _span()


@dataclass(frozen=True)
class SetValue:
    """``set PATH = VALUE``: a literal, or an expression read from the payload
    (``upper($.arguments.note)``) that leaves the payload alone when it has no value."""

    path: PathRef
    value: Operand
    guard: Guard | None = None
    code: str | None = None
    acknowledged: tuple[str, ...] = ()
    span: Span = _span()


@dataclass(frozen=True)
class Remove:
    path: PathRef
    guard: Guard | None = None
    code: str | None = None
    acknowledged: tuple[str, ...] = ()
    span: Span = _span()


@dataclass(frozen=True)
class Truncate:
    path: PathRef
    length: int | float
    replacement: str | None = None
    guard: Guard | None = None
    code: str | None = None
    acknowledged: tuple[str, ...] = ()
    span: Span = _span()


@dataclass(frozen=True)
class Acknowledge:
    """``acknowledge W304 "why"``: the block (or, on a rule's line, the rule) means it."""

    codes: tuple[str, ...]
    reason: str | None = None
    span: Span = _span()


@dataclass(frozen=True)
class ServerMap:
    """``server NAME tools [...]``: which server a tool belongs to, for flow rules."""

    server: str
    tools: tuple[str, ...]
    span: Span = _span()


@dataclass(frozen=True)
class Remember:
    """``remember PATTERNS [in PATH] as LABEL``: note, per session, the values those
    patterns find in results, with the server each came from."""

    patterns: tuple[PatternRef, ...]
    label: str
    path: PathRef | None = None
    code: str | None = None
    acknowledged: tuple[str, ...] = ()
    span: Span = _span()


@dataclass(frozen=True)
class FlowRule:
    """``deny flow LABEL|PATTERNS [in PATH] across servers``: a value remembered from
    one server, found in a request to another. With patterns instead of a label,
    the rule also remembers what they find (the one-line form). ``from A, B`` and
    ``to C, D`` in place of ``across servers`` narrow it to values remembered from
    those servers, or requests to those servers (empty: any)."""

    severity: RuleSeverity
    patterns: tuple[PatternRef, ...]
    label: str | None
    path: PathRef | None = None
    message: str | None = None
    code: str | None = None
    acknowledged: tuple[str, ...] = ()
    span: Span = _span()
    sources: tuple[str, ...] = ()
    destinations: tuple[str, ...] = ()


FLOW_RULES = (Remember, FlowRule)
ValidatorRule = CheckRule | ListRule | LimitRule | Remember | FlowRule | RateLimit
MutatorRule = Redact | Mask | Hash | SetValue | Remove | Truncate
Rule = ValidatorRule | MutatorRule
# What the compiler lowers: every rule after the pipeline's desugar stage.
CoreRule = CheckRule | MutatorRule | Remember | FlowRule | RateLimit
Setting = Description | Version | ModeSetting | FailSetting | PrioritySetting | CompatSetting
Statement = Hook | Setting | ParamDef | Acknowledge | ServerMap | Rule

VALIDATOR_RULES = (CheckRule, ListRule, LimitRule, Remember, FlowRule, RateLimit)
# The word a rule is known by in messages, traces and coverage reports.
RULE_KINDS: dict[type, str] = {
    CheckRule: "check",
    ListRule: "list",
    LimitRule: "limit",
    Remember: "remember",
    FlowRule: "flow",
    RateLimit: "limit",
    Redact: "redact",
    Mask: "mask",
    Hash: "hash",
    SetValue: "set",
    Remove: "remove",
    Truncate: "truncate",
}
MUTATOR_RULES = (Redact, Mask, Hash, SetValue, Remove, Truncate)

# ------------------------------------------------------------------ top level


@dataclass(frozen=True)
class PatternDef:
    name: str
    regex: RegexLiteral
    span: Span = _span()


@dataclass(frozen=True)
class EventDecl:
    """``event acme/tool/call``: a custom event the set means, even if close to a standard one."""

    events: tuple[EventName, ...]
    span: Span = _span()


@dataclass(frozen=True)
class Interceptor:
    kind: Literal["validator", "mutator"]
    name: str
    statements: tuple[Statement, ...]
    description: str | None = None
    version: str | None = None
    span: Span = _span()
    name_span: Span = _span()


# --------------------------------------------------------------------- tests


@dataclass(frozen=True)
class Given:
    event: str
    phase: PhaseName
    payload: Any
    span: Span = _span()


@dataclass(frozen=True)
class TestContext:
    context: Any
    span: Span = _span()


@dataclass(frozen=True)
class TestConfig:
    interceptor: str
    config: Any
    span: Span = _span()


@dataclass(frozen=True)
class Only:
    names: tuple[str, ...]
    span: Span = _span()


@dataclass(frozen=True)
class SideSetting:
    side: Literal["sending", "receiving"]
    span: Span = _span()


@dataclass(frozen=True)
class ExpectDecision:
    decision: Literal["allow", "deny"]
    span: Span = _span()


@dataclass(frozen=True)
class ExpectMessage:
    text: str
    span: Span = _span()


@dataclass(frozen=True)
class ExpectCode:
    code: str
    span: Span = _span()


@dataclass(frozen=True)
class ExpectPayload:
    payload: Any
    span: Span = _span()


@dataclass(frozen=True)
class ExpectNoMessages:
    span: Span = _span()


@dataclass(frozen=True)
class ExpectNoCode:
    """``expect no code C``: the rule did not fire (validator) or changed nothing (mutator)."""

    code: str
    span: Span = _span()


@dataclass(frozen=True)
class ExpectUnchanged:
    """``expect unchanged`` (the whole payload) or ``expect unchanged PATH``."""

    path: PathRef | None = None
    span: Span = _span()


@dataclass(frozen=True)
class Calls:
    """``calls 61 every 1 second``: the `given` message sent N times on a virtual clock."""

    count: int | float
    every_per: int | float | None = None
    every_unit: str | None = None
    span: Span = _span()

    @property
    def every_seconds(self) -> float:
        if self.every_unit is None:
            return 0.0
        per = self.every_per if self.every_per is not None else 1
        return float(per) * WINDOW_SECONDS[self.every_unit.removesuffix("s")]


TestStatement = (
    Given
    | Calls
    | TestContext
    | TestConfig
    | Only
    | SideSetting
    | ExpectDecision
    | ExpectMessage
    | ExpectCode
    | ExpectPayload
    | ExpectNoMessages
    | ExpectNoCode
    | ExpectUnchanged
)

EXPECTATIONS = (
    ExpectDecision,
    ExpectMessage,
    ExpectCode,
    ExpectPayload,
    ExpectNoMessages,
    ExpectNoCode,
    ExpectUnchanged,
)


@dataclass(frozen=True)
class TestBlock:
    name: str
    statements: tuple[TestStatement, ...]
    span: Span = _span()


Item = PatternDef | EventDecl | Interceptor | TestBlock


@dataclass(frozen=True)
class Comment:
    text: str
    span: Span = _span()


@dataclass(frozen=True)
class PolicyFile:
    path: str
    items: tuple[Item, ...]
    comments: tuple[Comment, ...] = field(default=(), compare=False)
    span: Span = _span()

"""Policy tests: given a message, expect a decision, messages and a payload.

Test blocks live in any `.policy` file of the set (by convention in
`*_test.policy` files beside the policies). Each runs the whole set's chain
unless it says `only`. The side defaults to the one the conformance suite
assumes (a client: sending requests, receiving responses).

Each test starts with no rate-limit counters and a virtual clock at zero;
`calls N every D` sends its message N times, D apart on that clock, so a
limit is tested without sleeping, and the expectations are the last call's.
"""

from __future__ import annotations

import difflib
import json
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from ..chain import side_for
from ..compiler import PolicySet, RuleRef
from ..compiler.jsonpath import CompiledPath, PayloadTooDeep, compile_path
from ..compiler.rate_limits import RateLimitRuntime
from ..language import ast
from ..language.path_syntax import parse_path
from ..limits import MemoryLimitStore
from ..wire import ChainExecutionParams, ChainExecutionResult, InvocationContext, Phase, Side
from .local_chain import TracingProvider, run_local_chain


@dataclass
class CaseResult:
    file: str
    name: str
    line: int
    passed: bool
    failures: list[str] = field(default_factory=list)
    result: ChainExecutionResult | None = None
    duration_s: float = 0.0

    @property
    def id(self) -> str:
        return f"{self.file}::{self.name}"


@dataclass
class Coverage:
    """Rules that some test pinned, per file: they fired (or changed the payload), or a
    passing test expected them not to (`expect no code`, `expect unchanged PATH`)."""

    rules: dict[str, list[RuleRef]]
    fired: set[tuple[str, int]]
    held_back: set[tuple[str, int]] = field(default_factory=set)

    def _covered(self, ref: RuleRef) -> bool:
        where = (ref.span.file, ref.span.line)
        return where in self.fired or where in self.held_back

    def file_ratio(self, file: str) -> tuple[int, int]:
        refs = self.rules.get(file, [])
        return sum(1 for r in refs if self._covered(r)), len(refs)

    def missed_lines(self, file: str) -> list[int]:
        return sorted(r.span.line for r in self.rules.get(file, []) if not self._covered(r))

    @property
    def percent(self) -> float:
        total = sum(len(v) for v in self.rules.values())
        hit = sum(self.file_ratio(f)[0] for f in self.rules)
        return 100.0 if total == 0 else 100.0 * hit / total


@dataclass
class TestReport:
    cases: list[CaseResult]
    coverage: Coverage
    duration_s: float

    @property
    def failed(self) -> list[CaseResult]:
        return [c for c in self.cases if not c.passed]


def _payload_diff(expected: Any, actual: Any) -> str:
    want = json.dumps(expected, indent=2, sort_keys=True, ensure_ascii=False).splitlines()
    got = json.dumps(actual, indent=2, sort_keys=True, ensure_ascii=False).splitlines()
    return "\n".join(difflib.unified_diff(want, got, "expected", "actual", lineterm=""))


def _messages(result: ChainExecutionResult) -> list[str]:
    return [m.message for r in result.results for m in (r.messages or [])]


def _values_at(path: CompiledPath, payload: Any) -> list[Any]:
    try:
        return path.values(payload)
    except PayloadTooDeep:
        return []


def _expectation(statement: ast.TestStatement) -> str:
    """The expectation as written, so a failure names the line it comes from."""
    if isinstance(statement, ast.ExpectDecision):
        return f"expect {statement.decision}"
    if isinstance(statement, ast.ExpectMessage):
        return f"expect message {json.dumps(statement.text, ensure_ascii=False)}"
    if isinstance(statement, ast.ExpectCode):
        return f"expect code {statement.code}"
    if isinstance(statement, ast.ExpectNoCode):
        return f"expect no code {statement.code}"
    if isinstance(statement, ast.ExpectNoMessages):
        return "expect no messages"
    if isinstance(statement, ast.ExpectPayload):
        return "expect payload"
    if isinstance(statement, ast.ExpectUnchanged):
        return "expect unchanged" + ("" if statement.path is None else f" {statement.path.source}")
    return type(statement).__name__


def _decided(result: ChainExecutionResult, messages: list[str]) -> str:
    """What the chain did: who denied and why, or that nothing did."""
    if result.aborted_at is not None:
        return f"deny by `{result.aborted_at.interceptor}` ({result.aborted_at.reason})"
    return "allow" + (f" (messages: {messages})" if messages else " (no rule denied)")


def _failure(
    statement: ast.TestStatement,
    given: ast.Given,
    result: ChainExecutionResult,
    fired_codes: set[str],
    messages: list[str],
) -> list[str]:
    """What ``statement`` expected and what the run gave, or nothing when it holds."""
    decision = "allow" if result.status == "success" else "deny"
    fired = sorted(fired_codes) or "none"
    if isinstance(statement, ast.ExpectDecision) and statement.decision != decision:
        return [f"got {_decided(result, messages)}"]
    if isinstance(statement, ast.ExpectMessage) and statement.text not in messages:
        return [f"got messages {messages}" if messages else "got no messages"]
    if isinstance(statement, ast.ExpectCode) and statement.code not in fired_codes:
        return [f"rule `{statement.code}` did not fire; got {decision}, fired: {fired}"]
    if isinstance(statement, ast.ExpectNoMessages) and messages:
        return [f"got messages {messages}"]
    if isinstance(statement, ast.ExpectPayload) and result.final_payload != statement.payload:
        return [
            "got a different final payload:\n"
            + _payload_diff(statement.payload, result.final_payload)
        ]
    if isinstance(statement, ast.ExpectNoCode) and statement.code in fired_codes:
        return [f"rule `{statement.code}` fired; got {_decided(result, messages)}"]
    if isinstance(statement, ast.ExpectUnchanged):
        return _unchanged(statement, given.payload, result.final_payload)
    return []


def _check(case: ast.TestBlock, result: ChainExecutionResult, fired_codes: set[str]) -> list[str]:
    """One line per failed expectation: its line, the expectation as written, what it got."""
    failures: list[str] = []
    given = next(s for s in case.statements if isinstance(s, ast.Given))
    messages = _messages(result)
    for statement in case.statements:
        for got in _failure(statement, given, result, fired_codes, messages):
            failures.append(
                f"line {statement.span.line}: `{_expectation(statement)}` failed: {got}"
            )
    return failures


def _unchanged(statement: ast.ExpectUnchanged, before: Any, after: Any) -> list[str]:
    if statement.path is None:
        if after == before:
            return []
        return ["the payload changed:\n" + _payload_diff(before, after)]
    path = compile_path(parse_path(statement.path.source))
    old, new = _values_at(path, before), _values_at(path, after)
    if old == new:
        return []
    return [
        f"`{statement.path.source}` changed:\n" + _payload_diff(old, new),
    ]


def _held_back(case: ast.TestBlock, rules: list[RuleRef], paths: dict[str, str]) -> set[RuleRef]:
    """The rules a passing test pinned as not firing, by code or by the path they write."""
    codes = {s.code for s in case.statements if isinstance(s, ast.ExpectNoCode)}
    untouched = {
        s.path.source
        for s in case.statements
        if isinstance(s, ast.ExpectUnchanged) and s.path is not None
    }
    everything = any(isinstance(s, ast.ExpectUnchanged) and s.path is None for s in case.statements)
    return {
        ref
        for ref in rules
        if ref.code in codes
        or paths.get(ref.code) in untouched
        or (everything and ref.code in paths)
    }


class InvalidTestCase(Exception):
    """A test block the chain cannot run (its context is not an invocation context)."""


def _context(statement: ast.TestContext) -> InvocationContext:
    try:
        return InvocationContext.model_validate(statement.context)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "context"
        raise InvalidTestCase(
            f"line {statement.span.line}: `context` is not an invocation context:"
            f" `{where}`: {first['msg'].lower()}"
        ) from None


def case_params(case: ast.TestBlock) -> tuple[ChainExecutionParams, Side]:
    """What the test block sends; ``InvalidTestCase`` when it cannot be sent."""
    given = next(s for s in case.statements if isinstance(s, ast.Given))
    phase: Phase = given.phase
    side: Side = side_for("client", phase)
    configs: dict[str, dict[str, Any]] = {}
    names: list[str] | None = None
    context: InvocationContext | None = None
    for statement in case.statements:
        if isinstance(statement, ast.SideSetting):
            side = statement.side
        elif isinstance(statement, ast.TestConfig):
            configs[statement.interceptor] = statement.config
        elif isinstance(statement, ast.Only):
            names = list(statement.names)
        elif isinstance(statement, ast.TestContext):
            context = _context(statement)
    params = ChainExecutionParams(
        event=given.event,
        phase=phase,
        payload=given.payload,
        interceptors=names,
        config=configs or None,
        context=context,
    )
    return params, side


async def run_tests(policy_set: PolicySet, name_filter: str | None = None) -> TestReport:
    started = time.perf_counter()
    provider = TracingProvider(policy_set)
    rules: dict[str, list[RuleRef]] = defaultdict(list)
    for compiled in policy_set.interceptors.values():
        for ref in compiled.rule_refs():
            rules[ref.span.file].append(ref)
    fired: set[tuple[str, int]] = set()
    held_back: set[tuple[str, int]] = set()
    every_rule = [ref for refs in rules.values() for ref in refs]
    paths = _mutator_paths(policy_set)
    cases: list[CaseResult] = []
    for file, case in policy_set.model.tests:
        if name_filter and name_filter not in case.name:
            continue
        case_started = time.perf_counter()
        try:
            params, side = case_params(case)
        except InvalidTestCase as exc:
            cases.append(CaseResult(file, case.name, case.span.line, False, [str(exc)]))
            continue
        result = await _run_calls(policy_set, provider, case, params, side)
        codes: set[str] = set()
        for _, trace in provider.traces:
            for event in trace.events:
                codes.add(event.rule.code)
                fired.add((event.rule.span.file, event.rule.span.line))
        failures = _check(case, result, codes)
        if not failures:
            held_back |= {(r.span.file, r.span.line) for r in _held_back(case, every_rule, paths)}
        cases.append(
            CaseResult(
                file,
                case.name,
                case.span.line,
                not failures,
                failures,
                result,
                time.perf_counter() - case_started,
            )
        )
    coverage = Coverage(dict(rules), fired, held_back)
    return TestReport(cases, coverage, time.perf_counter() - started)


class _VirtualClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def _run_calls(
    policy_set: PolicySet,
    provider: TracingProvider,
    case: ast.TestBlock,
    params: ChainExecutionParams,
    side: Side,
) -> ChainExecutionResult:
    """The case's message, `calls N` times on a fresh virtual clock; the last result."""
    calls = next((s for s in case.statements if isinstance(s, ast.Calls)), None)
    count = int(calls.count) if calls is not None else 1
    every = calls.every_seconds if calls is not None else 0.0
    clock = _VirtualClock()
    real = policy_set.rate_limits
    policy_set.rate_limits = RateLimitRuntime(MemoryLimitStore(clock=clock), real.fingerprinter)
    try:
        result = await run_local_chain(provider, params, side)
        for _ in range(count - 1):
            clock.now += every
            result = await run_local_chain(provider, params, side)
        return result
    finally:
        policy_set.rate_limits = real


def _mutator_paths(policy_set: PolicySet) -> dict[str, str]:
    """Rule code -> the path a mutator rule writes."""
    return {
        mutation.ref.code: mutation.source
        for compiled in policy_set.interceptors.values()
        for mutation in compiled.mutations
    }

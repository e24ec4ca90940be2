"""Flow rules at run time: remember what results carry, refuse it on the way to another server.

A flow rule is evaluated after the validator's other rules, with session
state from a `FlowStore`. Results (the response phase) are sources: every
value the rule's patterns find is remembered as a keyed fingerprint with the
server the result came from. Requests are sinks: a value whose fingerprint
was remembered from a *different* server makes the rule fire.

Attribution, in order: the invocation context's ``server`` (the gateway sets
it to the owning backend); for a `tools/call` request, the interceptor's
``server NAME tools [...]`` map by tool name; for a response, the server of
the session's last request. A request whose server cannot be told is treated
as going to another server, and a message without a ``sessionId`` makes
every flow rule fire: both fail closed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..flow import (
    Fingerprinter,
    FlowEntry,
    FlowStore,
    FlowStoreError,
    MemoryFlowStore,
    Recall,
)
from ..language import ast
from ..language.path_syntax import format_location, parse_path
from ..wire import Severity, ValidationMessage, ValidationResult
from ..wire.errors import execution_failed
from .conditions import CompileEnv, EvalContext
from .jsonpath import CompiledPath, compile_path
from .matchers import TextMatcher, pattern_specs
from .run_now import finish_now, needs_invoke
from .trace import RuleEvent, RuleRef, Trace
from .validators import SEVERITIES, render_message, replace_result

UNKNOWN_SERVER = "(unknown)"
NO_SESSION = (
    "flow rule `{rule}` needs a session id (context.sessionId) and fails closed without one"
)
SYNTHETIC_NOTE = (
    "note: flow rules ran messages without a context.sessionId in one synthetic session "
    "`{session}` for this run (real traffic without one fails closed)"
)
DEFAULT_MESSAGE = "value first seen in {source} reaches server `{server}`"
_RANK = {None: -1, "info": 0, "warn": 1, "error": 2}


@dataclass(frozen=True)
class CompiledFlow:
    ref: RuleRef
    label: str
    matcher: TextMatcher
    scope: CompiledPath | None
    remembers: bool
    checks: bool
    severity: Severity
    message: str
    sources: frozenset[str] = frozenset()
    destinations: frozenset[str] = frozenset()
    """The servers a `from` / `to` narrows the rule to; empty: any."""

    def covers(self, source: str, destination: str) -> bool:
        """Whether a value remembered from ``source`` may not reach ``destination``. A
        server that cannot be told could be any of them: it is covered (fail closed)."""
        if source == destination != UNKNOWN_SERVER:
            return False
        return _names(self.sources, source) and _names(self.destinations, destination)


def _names(servers: frozenset[str], server: str) -> bool:
    return not servers or server in servers or server == UNKNOWN_SERVER


def compile_flow(rule: ast.Remember | ast.FlowRule, ref: RuleRef, env: CompileEnv) -> CompiledFlow:
    scope = compile_path(parse_path(rule.path.source)) if rule.path is not None else None
    if isinstance(rule, ast.Remember):
        matcher = TextMatcher(pattern_specs(rule.patterns, env.patterns))
        return CompiledFlow(ref, rule.label, matcher, scope, True, False, "info", "")
    # The one-line form remembers under a label of its own.
    label = rule.label if rule.label is not None else f"@{ref.code}"
    patterns = rule.patterns if rule.label is None else ()
    matcher = TextMatcher(pattern_specs(patterns, env.patterns)) if patterns else _NO_MATCHER
    return CompiledFlow(
        ref,
        label,
        matcher,
        scope,
        rule.label is None,
        True,
        SEVERITIES[rule.severity],
        rule.message or DEFAULT_MESSAGE,
        frozenset(rule.sources),
        frozenset(rule.destinations),
    )


_NO_MATCHER = TextMatcher([])


def label_matchers(flows: list[CompiledFlow]) -> dict[str, list[TextMatcher]]:
    """What finds a label's values in a request: the patterns that remember it, set-wide."""
    found: dict[str, list[TextMatcher]] = {}
    for flow in flows:
        if flow.remembers:
            found.setdefault(flow.label, []).append(flow.matcher)
    return found


def _strings(
    node: Any, location: tuple[str | int, ...]
) -> Iterator[tuple[str, tuple[str | int, ...]]]:
    """Every string below ``node``, member names included (a secret can be a key), iteratively."""
    stack = [(node, location)]
    while stack:
        value, where = stack.pop()
        if isinstance(value, str):
            yield value, where
        elif isinstance(value, dict):
            for key, child in reversed(value.items()):
                stack.append((child, (*where, key)))
                stack.append((key, (*where, key)))
        elif isinstance(value, list):
            stack.extend((child, (*where, i)) for i, child in reversed(list(enumerate(value))))


def _found(
    matchers: list[TextMatcher], scope: CompiledPath | None, payload: Any
) -> list[tuple[str, str]]:
    """(value, path) of every match in the scope, in document order, once each."""
    roots = scope.find(payload) if scope is not None else [(payload, ())]
    seen: set[str] = set()
    found: list[tuple[str, str]] = []
    for root, location in roots:
        for text, where in _strings(root, location):
            for matcher in matchers:
                if not matcher.search(text):  # one cheap pass for the common, clean case
                    continue
                for hit in matcher.hits(text):
                    value = text[hit.start : hit.end]
                    if value not in seen:
                        seen.add(value)
                        found.append((value, format_location(where)))
    return found


@dataclass(frozen=True)
class FlowScope:
    """What one validator's flow rules need besides the message: built once per policy set."""

    name: str
    flows: list[CompiledFlow]
    servers: dict[str, str]
    """Tool name -> server, from the validator's `server ... tools` lines."""
    labels: dict[str, list[TextMatcher]]
    """Label -> the patterns that find its values: the whole set's `remember` rules."""


class FlowRuntime:
    """The flow rules of a policy set and the state they share."""

    def __init__(
        self,
        store: FlowStore | None = None,
        fingerprinter: Fingerprinter | None = None,
        synthetic_session: str | None = None,
    ) -> None:
        self.store: FlowStore = store if store is not None else MemoryFlowStore()
        self.fingerprinter = fingerprinter or Fingerprinter()
        self.synthetic_session = synthetic_session
        """Local tools only (eval, diff, test, the playground): the session of messages
        without a ``sessionId``, so a run's messages form one flow. Real traffic has none."""
        self.synthetic_used = False

    def synthetic_note(self) -> str | None:
        """What a tool prints when messages ran in its synthetic session."""
        if not self.synthetic_used:
            return None
        return SYNTHETIC_NOTE.format(session=self.synthetic_session)

    def _fingerprint(self, label: str, value: str) -> str:
        return self.fingerprinter.of(f"{label}\x00{value}")

    async def apply(
        self,
        scope: FlowScope,
        ctx: EvalContext,
        result: ValidationResult,
        trace: Trace | None,
    ) -> ValidationResult:
        """The validator's result with its flow rules applied; store failures fail closed."""
        try:
            return await self._apply(scope, ctx, result, trace)
        except FlowStoreError as exc:
            raise execution_failed(scope.name, str(exc)) from None

    def apply_now(
        self,
        scope: FlowScope,
        ctx: EvalContext,
        result: ValidationResult,
        trace: Trace | None,
    ) -> ValidationResult:
        """`apply` for synchronous callers: only the in-process store can answer at once."""
        if not isinstance(self.store, MemoryFlowStore):
            raise needs_invoke(scope.name, "flow rules")
        try:
            return finish_now(self._apply(scope, ctx, result, trace), "in-process flow store")
        except FlowStoreError as exc:  # the in-process store is full
            raise execution_failed(scope.name, str(exc)) from None

    async def _apply(
        self,
        scope: FlowScope,
        ctx: EvalContext,
        result: ValidationResult,
        trace: Trace | None,
    ) -> ValidationResult:
        name, flows, labels = scope.name, scope.flows, scope.labels
        session = ctx.context.get("sessionId")
        if (not isinstance(session, str) or not session) and self.synthetic_session:
            session = self.synthetic_session
            self.synthetic_used = True
        added: list[ValidationMessage] = []
        if not isinstance(session, str) or not session:
            for flow in flows:
                text = NO_SESSION.format(rule=flow.ref.code)
                added.append(ValidationMessage(message=text, severity="error"))
                if trace is not None:
                    trace.events.append(RuleEvent(flow.ref, None, text, "error"))
            return _with_messages(result, added, flow_fired=[f.ref for f in flows])
        server = await self._server_of(scope.servers, ctx, session)
        fired: list[RuleRef] = []
        if ctx.phase == "request":
            await self.store.set_last_server(session, server)
            for flow in flows:
                if not flow.checks:
                    continue
                found = _found(labels.get(flow.label, []), flow.scope, ctx.payload)
                prints = {self._fingerprint(flow.label, v): (v, p) for v, p in found}
                recalled = await self.store.recall(session, list(prints))
                for fingerprint, entry in _suspects(recalled, prints):
                    if not flow.covers(entry.server, server):
                        continue
                    _, path = prints[fingerprint]
                    text = render_message(
                        flow.message,
                        {
                            "source": entry.source,
                            "source_server": entry.server,
                            "server": server,
                            "path": path,
                            "interceptor": name,
                        },
                    )
                    added.append(ValidationMessage(path=path, message=text, severity=flow.severity))
                    fired.append(flow.ref)
                    if trace is not None:
                        trace.events.append(RuleEvent(flow.ref, path, text, flow.severity))
        else:
            for flow in flows:
                if not flow.remembers:
                    continue
                found = _found([flow.matcher], flow.scope, ctx.payload)
                if not found:
                    continue
                # One entry per place, shared by the values found there: a full
                # session costs a fingerprint and a reference per value.
                places: dict[str, FlowEntry] = {}
                place = f"{ctx.event} {ctx.phase} from `{server}` at "
                entries = {
                    self._fingerprint(flow.label, value): places.setdefault(
                        path, FlowEntry(server, place + path)
                    )
                    for value, path in found
                }
                await self.store.remember(session, entries)
                if trace is not None:
                    note = f"remembered {len(entries)} value(s) from `{server}` as `{flow.label}`"
                    trace.events.append(RuleEvent(flow.ref, found[0][1], note, None))
        return _with_messages(result, added, fired)

    async def _server_of(self, servers: dict[str, str], ctx: EvalContext, session: str) -> str:
        named = ctx.context.get("server")
        if isinstance(named, str) and named:
            return named
        if ctx.phase == "request":
            tool = ctx.payload.get("name") if isinstance(ctx.payload, dict) else None
            if ctx.event == "tools/call" and isinstance(tool, str) and tool in servers:
                return servers[tool]
            return UNKNOWN_SERVER
        last = await self.store.last_server(session)
        return last or UNKNOWN_SERVER


def _suspects(recalled: Recall, prints: dict[str, Any]) -> Iterator[tuple[str, FlowEntry]]:
    """The remembered values a request carries; when the session's state is incomplete,
    every value it carries, the ones it cannot vouch for as from an unknown server."""
    if recalled.lost is None:
        yield from recalled.entries.items()
        return
    unknown = FlowEntry(UNKNOWN_SERVER, f"an unknown place ({recalled.lost})")
    for fingerprint in prints:
        yield fingerprint, recalled.entries.get(fingerprint, unknown)


def _with_messages(
    result: ValidationResult, added: list[ValidationMessage], flow_fired: list[RuleRef]
) -> ValidationResult:
    if not added:
        return result
    messages = [*(result.messages or []), *added]
    severity = result.severity
    for message in added:
        if _RANK[message.severity] > _RANK[severity]:
            severity = message.severity
    info = dict(result.info or {})
    rules = list(info.get("rules", []))
    rules.extend({"rule": ref.code, "source": ref.source} for ref in flow_fired)
    info["rules"] = rules
    return replace_result(result, messages, severity, info)

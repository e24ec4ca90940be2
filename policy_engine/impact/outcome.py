"""One message through one policy set, reduced to what a reviewer compares.

An outcome is the decision, the highest severity, the messages (as a sorted
multiset, so reordering rules changes nothing) and the final payload in
canonical form. Rule identities are kept only to say *which* rule a change
comes from: a rule's declared `code`, or its interceptor and line.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from ..chain import InterceptorChain, side_for
from ..compiler import PolicySet
from ..testing import TracingProvider
from ..wire import ChainExecutionParams, ChainExecutionResult, InvocationContext, Phase, Side

Decision = Literal["allow", "deny"]
ChangeKind = Literal["allowed-to-blocked", "blocked-to-allowed", "mutation", "severity", "messages"]
CHANGE_TITLES: dict[ChangeKind, str] = {
    "allowed-to-blocked": "allowed before, blocked now",
    "blocked-to-allowed": "blocked before, allowed now",
    "mutation": "rewritten differently",
    "severity": "different severity",
    "messages": "different messages",
}
_RANK = {None: 0, "info": 1, "warn": 2, "error": 3}


@dataclass(frozen=True)
class Message:
    """One input message and where it came from (a traffic line, a test, a generator)."""

    event: str
    phase: Phase
    payload: Any
    side: Side
    context: dict[str, Any] | None = None
    origin: str = ""
    only: tuple[str, ...] | None = None
    """The interceptors a test block restricts itself to (`only`); ``None`` runs the set."""
    config: dict[str, dict[str, Any]] | None = None
    """Per-interceptor config a test block gives (`config NAME {...}`)."""

    @classmethod
    def of(
        cls,
        event: str,
        phase: Phase,
        payload: Any,
        side: Side | None = None,
        context: dict[str, Any] | None = None,
        origin: str = "",
    ) -> Message:
        return cls(event, phase, payload, side or side_for("client", phase), context, origin)

    def key(self) -> str:
        """Identical messages (a server records one line per interceptor) are run once."""
        return canonical(
            [self.event, self.phase, self.side, self.context, self.only, self.config, self.payload]
        )


@dataclass(frozen=True)
class Outcome:
    decision: Decision
    severity: str | None
    messages: tuple[tuple[str, str, str, str], ...]
    """Sorted (interceptor, severity, text, path) of every validation message."""
    payload: str
    """The final payload, canonical JSON; the payload as received when blocked."""
    blocked_by: tuple[str, str] | None
    fired: frozenset[tuple[str, str]] = field(default_factory=frozenset)
    """(interceptor, rule) of every rule that fired or changed the payload."""
    error: str | None = None
    rewrites: tuple[tuple[str, str], ...] = ()
    """(mutator, canonical output) of every mutator that changed the payload, in chain order."""
    blocking: frozenset[tuple[str, str]] = field(default_factory=frozenset)
    """(interceptor, rule) of every rule that denied it (error severity, not in audit mode)."""
    ran: frozenset[str] = field(default_factory=frozenset)
    """The interceptors that ran: a rule of one that did not is no evidence either way."""


@dataclass(frozen=True)
class Change:
    kind: ChangeKind
    interceptor: str
    rule: str
    message: Message
    before: Outcome
    after: Outcome


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class OutcomeRunner:
    """A chain over one policy set, connected once and run on many messages."""

    def __init__(self, chain: InterceptorChain, provider: TracingProvider) -> None:
        self._chain = chain
        self._provider = provider

    @classmethod
    @asynccontextmanager
    async def open(cls, policy_set: PolicySet) -> AsyncIterator[OutcomeRunner]:
        provider = TracingProvider(policy_set)
        async with InterceptorChain.connect(local={"policies": provider}) as chain:
            yield cls(chain, provider)

    async def run(self, message: Message) -> Outcome:
        self._provider.traces.clear()
        params = ChainExecutionParams(
            event=message.event,
            phase=message.phase,
            payload=message.payload,
            interceptors=list(message.only) if message.only is not None else None,
            config=message.config,
            context=(
                InvocationContext.model_validate(message.context) if message.context else None
            ),
        )
        result = await self._chain.execute(params, side=message.side)
        return self._reduce(result, message)

    def _reduce(self, result: ChainExecutionResult, message: Message) -> Outcome:
        fired: set[tuple[str, str]] = set()
        blocking: dict[str, str] = {}
        audited = {entry.interceptor for entry in result.results if entry.mode == "audit"}
        denials: set[tuple[str, str]] = set()
        for name, trace in self._provider.traces:
            for event in trace.events:
                fired.add((name, event.rule.code))
                if event.severity == "error":
                    blocking.setdefault(name, event.rule.code)
                    if name not in audited:
                        denials.add((name, event.rule.code))
        messages: list[tuple[str, str, str, str]] = []
        rewrites: list[tuple[str, str]] = []
        severity: str | None = None
        for entry in result.results:
            if entry.type == "mutation" and entry.modified and entry.mode != "audit":
                rewrites.append((entry.interceptor, canonical(entry.payload)))
            for item in entry.messages or []:
                messages.append((entry.interceptor, item.severity, item.message, item.path or ""))
                if _RANK.get(item.severity, 0) > _RANK.get(severity, 0):
                    severity = item.severity
        blocked_by = None
        error = None
        if result.aborted_at is not None:
            name = result.aborted_at.interceptor
            blocked_by = (name, blocking.get(name, "(error)"))
            if name not in blocking:
                error = result.aborted_at.reason
        allowed = result.status == "success"
        final = result.final_payload if allowed else message.payload
        return Outcome(
            "allow" if allowed else "deny",
            severity,
            tuple(sorted(messages)),
            canonical(final),
            blocked_by,
            frozenset(fired),
            error,
            tuple(rewrites),
            frozenset(denials),
            frozenset(entry.interceptor for entry in result.results),
        )


def _rule_of(before: Outcome, after: Outcome) -> tuple[str, str]:
    """The rule a difference is attributed to: first in the symmetric difference."""
    changed = sorted(before.fired ^ after.fired)
    return changed[0] if changed else ("(set)", "(order)")


def _rewriter_of(before: Outcome, after: Outcome) -> tuple[str, str]:
    """The first mutator whose output differs, and a rule of it that changed the payload."""
    olds, news = dict(before.rewrites), dict(after.rewrites)
    # A mutator that rewrote in only one of the two runs is the cause; one whose
    # output differs only because its input did is an effect.
    alone = [n for n in [*olds, *news] if (n in olds) != (n in news)]
    for name in [*alone, *dict.fromkeys([*olds, *news])]:
        if olds.get(name) != news.get(name):
            rules = sorted(r for i, r in after.fired | before.fired if i == name)
            return (name, rules[0] if rules else "(output)")
    return _rule_of(before, after)


def _rules_only_in(first: Outcome, second: Outcome) -> tuple[str, str] | None:
    """The first rule denying in ``first`` and not in ``second`` (its interceptor ran in both)."""
    both = first.ran & second.ran
    only = sorted(r for r in first.blocking - second.blocking if r[0] in both)
    return only[0] if only else None


def compare_outcomes(message: Message, before: Outcome, after: Outcome) -> Change | None:
    """The one change a message shows between two outcomes, most important first."""
    kind: ChangeKind
    if before.decision == "allow" and after.decision == "deny":
        kind, (interceptor, rule) = (
            "allowed-to-blocked",
            after.blocked_by or _rule_of(before, after),
        )
    elif before.decision == "deny" and after.decision == "allow":
        kind, (interceptor, rule) = (
            "blocked-to-allowed",
            before.blocked_by or _rule_of(before, after),
        )
    elif (loosened := _rules_only_in(before, after)) is not None:
        # Still denied, but by fewer rules: the rule that let go is a loosening
        # another rule happens to hide on this message, not a wording change.
        kind, (interceptor, rule) = "blocked-to-allowed", loosened
    elif (tightened := _rules_only_in(after, before)) is not None:
        kind, (interceptor, rule) = "allowed-to-blocked", tightened
    elif before.decision == "allow" and before.payload != after.payload:
        kind, (interceptor, rule) = "mutation", _rewriter_of(before, after)
    elif before.severity != after.severity:
        kind, (interceptor, rule) = "severity", _rule_of(before, after)
    elif before.messages != after.messages:
        kind, (interceptor, rule) = "messages", _rule_of(before, after)
    else:
        return None
    return Change(kind, interceptor, rule, message, before, after)

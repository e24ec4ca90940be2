"""`policyc replay`: recorded traffic through a candidate set, against a baseline.

With a baseline set both are evaluated, so every kind of change shows
(decision, mutation, severity, messages). Without one, the recorded decision
is the baseline and only decisions can be compared: the record holds the
payload as received, not what the old set made of it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable

from ..compiler import PolicySet
from ..wire.traffic import TrafficRecord
from .outcome import Change, Decision, Message, Outcome, OutcomeRunner, canonical, compare_outcomes
from .report import Grouping, ImpactReport


def _recorded(record: TrafficRecord, message: Message) -> Outcome:
    decision: Decision = "deny" if record.decision == "deny" else "allow"
    return Outcome(decision, None, (), canonical(message.payload), ("(recorded)", "(recorded)"))


async def replay(
    candidate: PolicySet,
    traffic: Iterable[tuple[Message, TrafficRecord]],
    baseline: PolicySet | None = None,
    examples: int = 3,
) -> ImpactReport:
    """Stream ``traffic`` through the sets: changes are grouped as they come, so memory
    holds the groups and their examples, never the recording or every change."""
    grouped = Grouping(examples)
    notes: list[str] = []
    counts = {"messages": 0, "undecided": 0}
    async for change in _changes(candidate, traffic, baseline, counts):
        grouped.add(change)
    undecided = counts["undecided"]
    if undecided:
        notes.append(
            f"{undecided} record(s) carry no decision and no --baseline was given: not compared"
        )
    if baseline is None:
        notes.append("no --baseline: compared against recorded decisions only")
    return ImpactReport("policyc replay", grouped.groups(), counts["messages"], notes)


async def _changes(
    candidate: PolicySet,
    traffic: Iterable[tuple[Message, TrafficRecord]],
    baseline: PolicySet | None,
    counts: dict[str, int],
) -> AsyncIterator[Change]:
    async with OutcomeRunner.open(candidate) as after_runner:
        if baseline is None:
            for message, record in traffic:
                counts["messages"] += 1
                if record.decision is None:
                    counts["undecided"] += 1
                    continue
                after = await after_runner.run(message)
                before = _recorded(record, message)
                if before.decision != after.decision:
                    change = compare_outcomes(message, before, after)
                    if change is not None:
                        yield change
        else:
            async with OutcomeRunner.open(baseline) as before_runner:
                for message, _ in traffic:
                    counts["messages"] += 1
                    before = await before_runner.run(message)
                    after = await after_runner.run(message)
                    change = compare_outcomes(message, before, after)
                    if change is not None:
                        yield change

"""`policyc replay`: recorded traffic through a candidate set, against a baseline.

With a baseline set both are evaluated, so every kind of change shows
(decision, mutation, severity, messages). Without one, the recorded decision
is the baseline and only decisions can be compared: the record holds the
payload as received, not what the old set made of it.
"""

from __future__ import annotations

from ..compiler import PolicySet
from ..wire.traffic import TrafficRecord
from .outcome import Change, Decision, Message, Outcome, OutcomeRunner, canonical, compare_outcomes
from .report import ImpactReport, group_changes


def _recorded(record: TrafficRecord, message: Message) -> Outcome:
    decision: Decision = "deny" if record.decision == "deny" else "allow"
    return Outcome(decision, None, (), canonical(message.payload), ("(recorded)", "(recorded)"))


async def replay(
    candidate: PolicySet,
    traffic: list[tuple[Message, TrafficRecord]],
    baseline: PolicySet | None = None,
    examples: int = 3,
) -> ImpactReport:
    changes: list[Change] = []
    notes: list[str] = []
    undecided = 0
    async with OutcomeRunner.open(candidate) as after_runner:
        if baseline is None:
            for message, record in traffic:
                if record.decision is None:
                    undecided += 1
                    continue
                after = await after_runner.run(message)
                before = _recorded(record, message)
                if before.decision != after.decision:
                    change = compare_outcomes(message, before, after)
                    if change is not None:
                        changes.append(change)
        else:
            async with OutcomeRunner.open(baseline) as before_runner:
                for message, _ in traffic:
                    before = await before_runner.run(message)
                    after = await after_runner.run(message)
                    change = compare_outcomes(message, before, after)
                    if change is not None:
                        changes.append(change)
    if undecided:
        notes.append(
            f"{undecided} record(s) carry no decision and no --baseline was given: not compared"
        )
    if baseline is None:
        notes.append("no --baseline: compared against recorded decisions only")
    return ImpactReport("policyc replay", group_changes(changes, examples), len(traffic), notes)

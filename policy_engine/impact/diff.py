"""`policyc diff OLD NEW`: what changed in structure, and where the two behave differently.

Behaviour is compared on three kinds of input: the test blocks of both sets,
recorded traffic when given, and payloads generated from the MCP payload
schemas with the literals of both sets placed at their paths. Each class of
difference (kind, interceptor, rule) keeps its smallest example, shrunk.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from ..compiler import PolicySet
from .generate import hooked_pairs, payloads_for, seeds_by_hook, test_messages
from .literals import collect_literals
from .outcome import Change, Message, OutcomeRunner, canonical, compare_outcomes
from .report import Group, ImpactReport
from .shrink import shrink
from .structure import structural_diff


@dataclass(frozen=True)
class DiffBudget:
    per_hook: int = 2000
    seconds: float = 30.0
    seed: int = 0
    examples: int = 3


async def behaviour_diff(
    old: PolicySet,
    new: PolicySet,
    extra: list[Message],
    budget: DiffBudget,
) -> tuple[list[Group], int, list[str]]:
    literals = collect_literals(old.model)
    collect_literals(new.model, literals)
    fixed = test_messages(old, "test (old)") + test_messages(new, "test (new)") + extra
    deadline = time.monotonic() + budget.seconds
    groups: dict[tuple[str, str, str], Group] = {}
    smallest: dict[tuple[str, str, str], Change] = {}
    seen: set[str] = set()
    count = 0
    notes: list[str] = []
    async with OutcomeRunner.open(old) as before_runner, OutcomeRunner.open(new) as after_runner:

        async def evaluate(message: Message) -> Change | None:
            return compare_outcomes(
                message, await before_runner.run(message), await after_runner.run(message)
            )

        async def consider(message: Message) -> None:
            nonlocal count
            key = message.key()
            if key in seen:
                return
            seen.add(key)
            count += 1
            change = await evaluate(message)
            if change is None:
                return
            group_key = (change.kind, change.interceptor, change.rule)
            group = groups.get(group_key)
            if group is None:
                group = groups[group_key] = Group(change.kind, change.interceptor, change.rule)
            group.count += 1
            best = smallest.get(group_key)
            if best is None or len(canonical(message.payload)) < len(
                canonical(best.message.payload)
            ):
                smallest[group_key] = change

        for message in fixed:
            await consider(message)
        test_seeds = seeds_by_hook(fixed)
        for event, phase in hooked_pairs(old, new):
            for payload in payloads_for(
                event,
                phase,
                test_seeds.get((event, phase), []),
                literals,
                budget.per_hook,
                deadline,
                budget.seed,
            ):
                await consider(Message.of(event, phase, payload, origin="generated"))  # type: ignore[arg-type]
        if time.monotonic() > deadline:
            notes.append(f"stopped at the {budget.seconds:g} s budget after {count} message(s)")
        for group_key, change in smallest.items():
            example = change.message

            async def still(
                payload: object,
                example: Message = example,
                wanted: tuple[str, str, str] = group_key,
            ) -> bool:
                found = await evaluate(replace(example, payload=payload))
                return found is not None and (found.kind, found.interceptor, found.rule) == wanted

            shrunk_payload = await shrink(example.payload, still)
            shrunk = replace(example, payload=shrunk_payload)
            final = await evaluate(shrunk)
            groups[group_key].examples.append(final if final is not None else change)
    ordered = sorted(groups.values(), key=lambda g: (g.kind, g.interceptor, g.rule))
    return ordered, count, notes


async def diff_sets(
    old: PolicySet, new: PolicySet, extra: list[Message], budget: DiffBudget
) -> ImpactReport:
    groups, count, notes = await behaviour_diff(old, new, extra, budget)
    report = ImpactReport("policyc diff", groups, count, notes)
    report.structural = structural_diff(old.model, new.model)
    return report

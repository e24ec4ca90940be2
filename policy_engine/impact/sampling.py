"""The sampled half of `policyc analyze`: rules never seen to fire on generated messages.

This is evidence, not proof: a rule that did not fire on N generated
messages may still fire on a message nobody generated. It is reported as
such and never as a diagnostic.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..compiler import PolicySet
from .generate import hooked_pairs, payloads_for, seeds_by_hook, test_messages
from .literals import collect_literals
from .outcome import Message, OutcomeRunner


@dataclass(frozen=True)
class Unfired:
    interceptor: str
    rule: str
    source: str
    samples: int


async def unfired_rules(
    policy_set: PolicySet, per_hook: int, seconds: float, seed: int
) -> list[Unfired]:
    """Rules of ``policy_set`` that fired on none of the generated messages."""
    literals = collect_literals(policy_set.model)
    seeds = seeds_by_hook(test_messages(policy_set, "test"))
    deadline = time.monotonic() + seconds
    fired: set[tuple[str, str]] = set()
    samples = 0
    async with OutcomeRunner.open(policy_set) as runner:
        for event, phase in hooked_pairs(policy_set):
            for payload in payloads_for(
                event, phase, seeds.get((event, phase), []), literals, per_hook, deadline, seed
            ):
                outcome = await runner.run(Message.of(event, phase, payload))  # type: ignore[arg-type]
                fired |= outcome.fired
                samples += 1
    return [
        Unfired(name, ref.code, ref.source, samples)
        for name, compiled in policy_set.interceptors.items()
        for ref in compiled.rule_refs()
        if (name, ref.code) not in fired
    ]

"""The sampled half of `policyc analyze`: rules never seen to fire on generated messages.

This is evidence, not proof: a rule that did not fire on N generated
messages may still fire on a message nobody generated. It is reported as
such and never as a diagnostic.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..chain import side_for
from ..compiler import PolicySet
from ..language import ast
from ..testing import TracingProvider
from ..testing.local_chain import run_local_chain
from ..wire import ChainExecutionParams
from .generate import payloads_for
from .literals import collect_literals


@dataclass(frozen=True)
class Unfired:
    interceptor: str
    rule: str
    source: str
    samples: int


async def unfired_rules(
    policy_set: PolicySet, per_hook: int, seconds: float, seed: int
) -> list[Unfired]:
    literals = collect_literals(policy_set.model)
    provider = TracingProvider(policy_set)
    fired: set[str] = set()
    samples = 0
    deadline = time.monotonic() + seconds
    seeds: dict[tuple[str, str], list[object]] = {}
    for _, case in policy_set.model.tests:
        for statement in case.statements:
            if isinstance(statement, ast.Given):
                seeds.setdefault((statement.event, statement.phase), []).append(statement.payload)
    hooks = dict.fromkeys(
        (event, phase)
        for interceptor in policy_set.model.interceptors
        for event, phase in interceptor.hooked()
        if "*" not in event
    )
    for event, phase in hooks:
        for payload in payloads_for(
            event, phase, seeds.get((event, phase), []), literals, per_hook, deadline, seed
        ):
            params = ChainExecutionParams(event=event, phase=phase, payload=payload)
            await run_local_chain(provider, params, side_for("client", phase))
            samples += 1
            for _, trace in provider.traces:
                fired.update(e.rule.source for e in trace.events)
    missing: list[Unfired] = []
    for name, compiled in policy_set.interceptors.items():
        for ref in compiled.rule_refs():
            if ref.source not in fired:
                missing.append(Unfired(name, ref.code, ref.source, samples))
    return missing

"""Seeded payloads for `policyc diff`: the schema's smallest payload, the test
payloads, and variants that put the policies' own literals at their paths.

Nothing here is random without a seed, so a diff in CI is reproducible; the
budget is a count and a deadline, whichever comes first.
"""

from __future__ import annotations

import copy
import random
import time
from collections.abc import Iterator
from typing import Any

from ..compiler import PolicySet
from ..language.path_syntax import Descend, Field, Index, PathSyntaxError, Wildcard, parse_path
from ..language.payload_schema import example_payload
from ..testing.runner import InvalidTestCase, case_params
from .literals import Literals
from .outcome import Message

# Fake values for the built-in patterns, so a redactor's behaviour is exercised.
PATTERN_SAMPLES: tuple[str, ...] = (
    "mail alice@example.com today",
    "ssn 123-45-6789",
    "card 4111 1111 1111 1111",
    "AKIAIOSFODNN7EXAMPLE",
    "ghp_0123456789abcdefghijABCDEFGHIJ012345",
    "sk_live_0123456789abcdefABCDEF01",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlc2lnbmF0dXJl",
    "call +1 415 555 0100",
    "ip 10.1.2.3",
    "rm -rf / ; cat /etc/passwd",
    "'; DROP TABLE users; --",
    "../../etc/passwd",
)


def test_messages(policy_set: PolicySet, label: str) -> list[Message]:
    """The message of every test block as the test runs it: side, context, `only` and config.

    Without its `only`, a test written for one interceptor also meets every
    other one, and an unrelated rule that denies it hides what changed.
    """
    found: list[Message] = []
    for file, case in policy_set.model.tests:
        try:
            params, side = case_params(case)
        except InvalidTestCase:
            continue  # `policyc test` reports it; a diff cannot send it

        context = params.context.to_wire() if params.context is not None else None
        found.append(
            Message(
                params.event,
                params.phase,
                params.payload,
                side,
                context,
                f"{label} {file}::{case.name}",
                tuple(params.interceptors) if params.interceptors is not None else None,
                params.config,
            )
        )
    return found


def hooked_pairs(*sets: PolicySet) -> list[tuple[str, str]]:
    """Every concrete (event, phase) any of the sets hooks, in order; wildcards cannot be sent."""
    seen: dict[tuple[str, str], None] = {}
    for policy_set in sets:
        for interceptor in policy_set.model.interceptors:
            for event, phase in interceptor.hooked():
                if "*" not in event:
                    seen.setdefault((event, phase), None)
    return list(seen)


def seeds_by_hook(messages: list[Message]) -> dict[tuple[str, str], list[object]]:
    """The payloads of ``messages`` per (event, phase): the bases generated variants start from."""
    seeds: dict[tuple[str, str], list[object]] = {}
    for message in messages:
        seeds.setdefault((message.event, message.phase), []).append(message.payload)
    return seeds


def set_path(payload: Any, source: str, value: Any) -> Any | None:
    """A copy of ``payload`` with ``value`` placed at ``source``, creating objects on the way.

    Wildcards pick a new key (or index 0), `..name` places ``name`` at the
    root; filters and slices are not placeable (``None``).
    """
    try:
        steps = parse_path(source).steps
    except PathSyntaxError:
        return None
    if not steps:
        return None
    keys: list[str | int] = []
    for step in steps:
        if isinstance(step, Field) and len(step.names) >= 1:
            keys.append(step.names[0])
        elif isinstance(step, Index) and step.indexes:
            keys.append(max(0, step.indexes[0]))
        elif isinstance(step, Wildcard):
            keys.append("k")
        elif isinstance(step, Descend):
            continue
        else:
            return None
    if not keys:
        return None
    root = copy.deepcopy(payload) if isinstance(payload, dict | list) else {}
    node: Any = root
    for position, key in enumerate(keys):
        last = position == len(keys) - 1
        following = None if last else keys[position + 1]
        fresh: Any = [] if isinstance(following, int) else {}
        if isinstance(key, int):
            if not isinstance(node, list):
                return None
            while len(node) <= key:
                node.append(copy.deepcopy(fresh) if not last else None)
            if last:
                node[key] = value
            elif not isinstance(node[key], dict | list):
                node[key] = fresh
            node = node[key]
        else:
            if not isinstance(node, dict):
                return None
            if last:
                node[key] = value
            else:
                if not isinstance(node.get(key), dict | list):
                    node[key] = fresh
                node = node[key]
    return root


def payloads_for(
    event: str,
    phase: str,
    seeds: list[Any],
    literals: Literals,
    budget: int,
    deadline: float,
    seed: int,
) -> Iterator[Any]:
    """Up to ``budget`` payloads for one event and phase, the plain ones first."""
    rng = random.Random(f"{seed}:{event}:{phase}")
    bases = [s for s in seeds if isinstance(s, dict)]
    example = example_payload(event, phase)
    if isinstance(example, dict):
        bases.append(example)
    if not bases:
        bases = [{}]
    produced = 0
    for base in bases:
        yield base
        produced += 1
    assignments = [(path, value) for path, values in literals.by_path.items() for value in values]
    text_paths = [path for path in literals.by_path if path not in ("$.name", "$.model")]
    for path in text_paths:
        for sample in PATTERN_SAMPLES:
            assignments.append((path, sample))
    for path, value in assignments:
        for base in bases:
            if produced >= budget or time.monotonic() > deadline:
                return
            variant = set_path(base, path, value)
            if variant is not None:
                yield variant
                produced += 1
    if not assignments:
        return
    while produced < budget and time.monotonic() <= deadline:
        combined: Any = rng.choice(bases)
        for path, value in rng.sample(assignments, k=min(len(assignments), rng.randint(2, 3))):
            placed = set_path(combined, path, value)
            if placed is not None:
                combined = placed
        yield combined
        produced += 1

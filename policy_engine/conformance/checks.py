"""Comparing what a server answered with what a fixture step expects, as the suite specifies.

Each check returns ``None`` when the step passes, or one line saying what
differed. Results are compared in RFC 8785 form after the fixture's volatile
keys are scrubbed, so an extra field, a ``null`` or a default written out
fails the step exactly as the suite intends.
"""

from __future__ import annotations

from typing import Any

from .jcs import CanonicalizationError, canonicalize
from .suite import ApplyStep, scrub

DETAIL_LIMIT = 300


def clip(text: str, limit: int = DETAIL_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def canonical_or_none(value: Any, volatile: frozenset[str]) -> str | None:
    try:
        return canonicalize(scrub(value, volatile))
    except CanonicalizationError:
        return None


def check_result(actual: Any, expected: str, volatile: frozenset[str]) -> str | None:
    got = canonical_or_none(actual, volatile)
    if got is None:
        return "the result has no canonical JSON form"
    if got != expected:
        return clip(f"got {got}, expected {expected}")
    return None


def check_error(code: int | None, expected: int) -> str | None:
    if code is None:
        return f"the call succeeded, expected JSON-RPC error {expected}"
    if code != expected:
        return f"JSON-RPC error {code}, expected {expected}"
    return None


def check_apply(
    decision: str, final_payload: Any, step: ApplyStep, volatile: frozenset[str]
) -> str | None:
    if decision != step.decision:
        return f"the chain decided {decision}, expected {step.decision}"
    final = canonical_or_none(final_payload, volatile)
    if final is None:
        return "the final payload has no canonical JSON form"
    expected = step.final_payload_canonical
    if expected is not None and final != expected:
        return clip(f"final payload {final}, expected {expected}")
    for needle in step.forbids:
        if needle in final:
            return clip(f"the final payload still holds `{needle}`")
    for needle in step.requires:
        if needle not in final:
            return clip(f"the final payload lacks `{needle}`")
    return None

"""``resolve_priority``: the SEP's resolvePriority, one phase at a time.

SEP, "Priority Resolution": ``overrides.priorityHint ?? interceptor.priorityHint``;
no hint is 0; a number applies to both phases; the object form gives each phase
its own number and a phase it leaves out is 0.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter

from policy_engine.wire import INT32_MAX, INT32_MIN, PhasePriority, PriorityHint, resolve_priority

HINT = TypeAdapter[Any](PriorityHint)


def hint(raw: Any) -> Any:
    """A priority hint as it would arrive on the wire (None: no hint at all)."""
    return None if raw is None else HINT.validate_python(raw)


# (declared, override, expected request, expected response)
CASES: list[tuple[Any, Any, int, int]] = [
    # No hint anywhere.
    (None, None, 0, 0),
    # A number applies to both phases.
    (-500, None, -500, -500),
    (INT32_MIN, None, INT32_MIN, INT32_MIN),
    (INT32_MAX, None, INT32_MAX, INT32_MAX),
    # The object form, with a phase missing or both present (SEP Interface examples).
    ({"request": -1000}, None, -1000, 0),
    ({"response": 1000}, None, 0, 1000),
    ({"request": -1000, "response": 1000}, None, -1000, 1000),
    ({}, None, 0, 0),
    # An override beats the declared hint, in either form.
    (-500, 7, 7, 7),
    ({"request": -1000, "response": 1000}, {"request": -2000, "response": 2000}, -2000, 2000),
    (-500, {"response": 3}, 0, 3),
    ({"request": -1000}, 42, 42, 42),
    # An override of 0 is still an override: it is not "absent".
    (-500, 0, 0, 0),
    # An override object that leaves a phase out resolves it to 0, not to the declared value.
    ({"request": -1000, "response": 1000}, {"request": 5}, 5, 0),
    ({"request": -1000, "response": 1000}, {}, 0, 0),
    # An override with nothing declared.
    (None, {"response": -9}, 0, -9),
    (None, 11, 11, 11),
]


@pytest.mark.parametrize(("declared", "override", "on_request", "on_response"), CASES)
def test_resolve_priority(declared: Any, override: Any, on_request: int, on_response: int) -> None:
    assert resolve_priority(hint(declared), "request", hint(override)) == on_request
    assert resolve_priority(hint(declared), "response", hint(override)) == on_response


def test_override_defaults_to_none() -> None:
    assert resolve_priority(PhasePriority(request=3), "request") == 3
    assert resolve_priority(PhasePriority(request=3), "response") == 0


def test_number_and_object_forms_parse_to_distinct_types() -> None:
    assert HINT.validate_python(-500) == -500
    assert HINT.validate_python({"request": -1000}) == PhasePriority(request=-1000)


# SEP "Phase-Specific Priorities": the redactor runs early when sending and late
# when receiving; the compressor the other way round.
@pytest.mark.parametrize(
    ("raw", "on_request", "on_response"),
    [
        ({"request": -50000, "response": 50000}, -50000, 50000),
        ({"request": 5000, "response": -5000}, 5000, -5000),
    ],
    ids=["pii-redactor", "compressor"],
)
def test_sep_phase_specific_examples(raw: Any, on_request: int, on_response: int) -> None:
    assert resolve_priority(hint(raw), "request") == on_request
    assert resolve_priority(hint(raw), "response") == on_response

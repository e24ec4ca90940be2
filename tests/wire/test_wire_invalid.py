"""Invalid wire input is rejected with a ValidationError that points at the field."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

from policy_engine.wire import (
    INT32_MAX,
    INT32_MIN,
    ChainExecutionParams,
    InterceptorDescriptor,
    InterceptorOverrides,
    InvokeParams,
    InvokeResult,
    ValidationResult,
)

RANGE_TEXT = "-2147483648 to 2147483647"
HOOK = {"events": ["tools/call"], "phase": "request"}
DESCRIPTOR = {"name": "guard", "type": "validation", "hooks": [HOOK]}
PARAMS = {"name": "guard", "event": "tools/call", "phase": "request", "payload": {}}


def errors_of(model: type[BaseModel], raw: dict[str, Any]) -> list[Any]:
    with pytest.raises(ValidationError) as caught:
        model.model_validate(raw)
    return list(caught.value.errors())


def locs(errors: list[Any]) -> list[tuple[Any, ...]]:
    return [tuple(error["loc"]) for error in errors]


@pytest.mark.parametrize("hint", [INT32_MAX + 1, INT32_MIN - 1, 2**63])
def test_priority_hint_out_of_int32_range(hint: int) -> None:
    errors = errors_of(InterceptorDescriptor, {**DESCRIPTOR, "priorityHint": hint})
    assert all(loc[0] == "priorityHint" for loc in locs(errors))
    assert any(RANGE_TEXT in error["msg"] for error in errors)


@pytest.mark.parametrize("phase", ["request", "response"])
@pytest.mark.parametrize("value", [INT32_MAX + 1, INT32_MIN - 1])
def test_per_phase_priority_out_of_int32_range(phase: str, value: int) -> None:
    errors = errors_of(InterceptorDescriptor, {**DESCRIPTOR, "priorityHint": {phase: value}})
    assert ("priorityHint", "PhasePriority", phase) in locs(errors)
    assert any(RANGE_TEXT in error["msg"] for error in errors)


@pytest.mark.parametrize("hint", [INT32_MIN, INT32_MAX, {"request": INT32_MIN}])
def test_int32_extremes_are_accepted(hint: Any) -> None:
    descriptor = InterceptorDescriptor.model_validate({**DESCRIPTOR, "priorityHint": hint})
    assert descriptor.to_wire()["priorityHint"] == hint


@pytest.mark.parametrize(
    "hint",
    [{"request": True}, True, 1.5, "10", {"response": "5"}, [1]],
    ids=["object-bool", "bool", "float", "string", "object-string", "list"],
)
def test_priority_hint_of_the_wrong_type(hint: Any) -> None:
    # Booleans are not numbers on the wire, even though Python treats them as ints.
    errors = errors_of(InterceptorDescriptor, {**DESCRIPTOR, "priorityHint": hint})
    assert errors
    assert all(loc[0] == "priorityHint" for loc in locs(errors))


def test_priority_hint_object_with_bool_names_the_phase() -> None:
    errors = errors_of(InterceptorDescriptor, {**DESCRIPTOR, "priorityHint": {"request": True}})
    assert ("priorityHint", "PhasePriority", "request") in locs(errors)


def test_unknown_phase_in_a_hook() -> None:
    errors = errors_of(
        InterceptorDescriptor, {**DESCRIPTOR, "hooks": [{**HOOK, "phase": "sideways"}]}
    )
    assert locs(errors) == [("hooks", 0, "phase")]


def test_unknown_phase_in_invoke_params() -> None:
    errors = errors_of(InvokeParams, {**PARAMS, "phase": "sideways"})
    assert locs(errors) == [("phase",)]


def test_unknown_interceptor_type_in_a_descriptor() -> None:
    errors = errors_of(InterceptorDescriptor, {**DESCRIPTOR, "type": "observer"})
    assert locs(errors) == [("type",)]


def test_unknown_interceptor_type_in_an_invoke_result() -> None:
    result = {"interceptor": "guard", "type": "observer", "phase": "request", "valid": True}
    # Through the concrete model the error sits on ``type`` ...
    assert locs(errors_of(ValidationResult, result)) == [("type",)]
    # ... and through the discriminated union pydantic reports it at the root,
    # naming ``type`` as the discriminator that did not match.
    with pytest.raises(ValidationError) as caught:
        TypeAdapter[Any](InvokeResult).validate_python(result)
    (error,) = caught.value.errors()
    assert error["type"] == "union_tag_invalid"
    assert error["ctx"]["discriminator"] == "'type'"
    assert error["ctx"]["tag"] == "observer"


def test_hook_with_no_events() -> None:
    errors = errors_of(
        InterceptorDescriptor, {**DESCRIPTOR, "hooks": [HOOK, {**HOOK, "events": []}]}
    )
    assert locs(errors) == [("hooks", 1, "events")]


@pytest.mark.parametrize("missing", ["payload", "name", "event", "phase"])
def test_invoke_params_missing_a_required_field(missing: str) -> None:
    raw = {key: value for key, value in PARAMS.items() if key != missing}
    errors = errors_of(InvokeParams, raw)
    assert [(error["type"], tuple(error["loc"])) for error in errors] == [("missing", (missing,))]


def test_null_payload_is_not_a_missing_payload() -> None:
    params = InvokeParams.model_validate({**PARAMS, "payload": None})
    assert params.payload is None
    assert params.to_wire()["payload"] is None


@pytest.mark.parametrize(
    "model, base",
    [
        (InvokeParams, PARAMS),
        (ChainExecutionParams, {"event": "tools/call", "phase": "request", "payload": {}}),
        (InterceptorOverrides, {}),
    ],
    ids=["invoke-params", "chain-params", "overrides"],
)
@pytest.mark.parametrize("timeout", [0, -1, "10", 1.5, True], ids=repr)
def test_invalid_timeout(model: type[BaseModel], base: dict[str, Any], timeout: Any) -> None:
    errors = errors_of(model, {**base, "timeoutMs": timeout})
    assert locs(errors) == [("timeoutMs",)]


@pytest.mark.parametrize("spelling", ["timeoutMs", "timeout_ms"])
def test_positive_integer_timeout_is_accepted(spelling: str) -> None:
    assert InvokeParams.model_validate({**PARAMS, spelling: 1}).timeout_ms == 1


def test_empty_interceptor_name() -> None:
    assert locs(errors_of(InterceptorDescriptor, {**DESCRIPTOR, "name": ""})) == [("name",)]
    assert locs(errors_of(InvokeParams, {**PARAMS, "name": ""})) == [("name",)]


def test_unknown_mode() -> None:
    errors = errors_of(InterceptorDescriptor, {**DESCRIPTOR, "mode": "shadow"})
    assert locs(errors) == [("mode",)]

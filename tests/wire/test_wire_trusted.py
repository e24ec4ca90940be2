"""`WireModel.trusted`: our own typed values set without validation, same model as validated."""

from __future__ import annotations

from typing import Any

import pytest

from policy_engine.wire import (
    ChainExecutionResult,
    ChainResultEntry,
    MutationResult,
    ValidationMessage,
    ValidationResult,
    ValidationSummary,
)

CASES: list[tuple[type[Any], dict[str, Any]]] = [
    (
        ValidationResult,
        {
            "interceptor": "pii",
            "phase": "request",
            "duration_ms": 0.25,
            "valid": False,
            "severity": "error",
            "messages": [ValidationMessage(path="$.a", message="no", severity="error")],
            "info": {"rules": [{"rule": "R1"}]},
        },
    ),
    (ValidationResult, {"interceptor": "pii", "phase": "response", "valid": True}),
    (
        MutationResult,
        {"interceptor": "r", "phase": "request", "modified": True, "payload": None},
    ),
    (ChainResultEntry, {"interceptor": "r", "type": "mutation", "phase": "request", "mode": None}),
    (ValidationSummary, {"errors": 1}),
]


@pytest.mark.parametrize(("model", "fields"), CASES)
def test_trusted_is_the_validated_model(model: type[Any], fields: dict[str, Any]) -> None:
    trusted, validated = model.trusted(**fields), model(**fields)
    assert trusted == validated
    assert trusted.to_wire() == validated.to_wire()
    assert trusted.model_dump_json() == validated.model_dump_json()  # same key order
    assert trusted.model_fields_set == validated.model_fields_set
    assert repr(trusted) == repr(validated)


def test_a_trusted_result_nests_in_a_trusted_chain_result() -> None:
    entry = ChainResultEntry.trusted(interceptor="v", type="validation", phase="request")
    fields = {
        "status": "success",
        "event": "tools/call",
        "phase": "request",
        "results": [entry],
        "final_payload": {"x": 1},
        "validation_summary": ValidationSummary.trusted(),
        "total_duration_ms": 1.5,
    }
    trusted = ChainExecutionResult.trusted(**fields)
    assert trusted.to_wire() == ChainExecutionResult.model_validate(fields).to_wire()


@pytest.mark.parametrize(
    "fields",
    [
        {"interceptor": "v", "phase": "request"},  # `valid` is required
        {"interceptor": "v", "phase": "request", "valid": True, "vaild": True},  # not a field
    ],
)
def test_trusted_refuses_a_missing_or_unknown_field(fields: dict[str, Any]) -> None:
    with pytest.raises(TypeError, match="unknown or missing"):
        ValidationResult.trusted(**fields)

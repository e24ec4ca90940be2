"""`WireModel.trusted` builds exactly what validating the same values builds.

The engine builds its own results unchecked (validators, the chain); these
prove the two objects indistinguishable for each model built that way:
equal, same fields in the same order, same fields set, same dumps.
"""

from __future__ import annotations

from typing import Any

import pytest

from policy_engine.wire import (
    AbortedAt,
    ChainExecutionResult,
    ChainResultEntry,
    ValidationMessage,
    ValidationResult,
    ValidationSummary,
    WireModel,
)

MESSAGE = {"path": "arguments.sql", "message": "no", "severity": "error"}
CASES: list[tuple[type[WireModel], dict[str, Any]]] = [
    (ValidationMessage, MESSAGE),
    (ValidationMessage, {"path": None, "message": "info", "severity": "info"}),
    (
        ValidationResult,
        {
            "interceptor": "guard",
            "phase": "request",
            "duration_ms": 0.125,
            "valid": True,
            "severity": None,
            "messages": None,
            "info": None,
        },
    ),
    (
        ValidationResult,
        {
            "interceptor": "guard",
            "phase": "response",
            "duration_ms": 1.5,
            "valid": False,
            "severity": "error",
            "messages": [ValidationMessage.model_validate(MESSAGE)],
            "info": {"rules": [{"rule": "r", "source": "a.policy:3", "message": "no"}]},
        },
    ),
    (ValidationSummary, {"errors": 1, "warnings": 0, "infos": 2}),
    (
        ChainResultEntry,
        {
            "interceptor": "pii",
            "type": "mutation",
            "phase": "request",
            "mode": None,
            "duration_ms": 0.5,
            "modified": True,
            "payload": None,
            "info": None,
        },
    ),
    (
        ChainResultEntry,
        {
            "interceptor": "audit",
            "type": "validation",
            "phase": "request",
            "mode": "audit",
            "duration_ms": 0.0,
            "severity": "warn",
            "error": "crashed",
        },
    ),
]


def _same(built: WireModel, validated: WireModel) -> None:
    assert built == validated
    assert type(built) is type(validated)
    assert list(built.__dict__) == list(validated.__dict__)
    assert built.__dict__ == validated.__dict__
    assert built.model_fields_set == validated.model_fields_set
    assert built.model_extra == validated.model_extra
    assert built.__pydantic_private__ == validated.__pydantic_private__
    assert built.to_wire() == validated.to_wire()
    assert built.model_dump() == validated.model_dump()
    assert repr(built) == repr(validated)


@pytest.mark.parametrize(("model", "values"), CASES)
def test_trusted_is_what_validation_builds(model: type[WireModel], values: dict[str, Any]) -> None:
    _same(model.trusted(dict(values)), model.model_validate(values))


def test_trusted_chain_result_is_what_validation_builds() -> None:
    entries = [values for model, values in CASES if model is ChainResultEntry]
    values: dict[str, Any] = {
        "status": "validation_failed",
        "event": "tools/call",
        "phase": "request",
        "final_payload": None,
        "total_duration_ms": 2.25,
        "aborted_at": AbortedAt(interceptor="guard", reason="no", type="validation"),
    }
    summary = {"errors": 1, "warnings": 0, "infos": 0}
    built = ChainExecutionResult.trusted(
        {
            **values,
            "results": [ChainResultEntry.trusted(dict(e)) for e in entries],
            "validation_summary": ValidationSummary.trusted(dict(summary)),
        }
    )
    validated = ChainExecutionResult.model_validate(
        {**values, "results": entries, "validation_summary": summary}
    )
    _same(built, validated)
    for one, other in zip(built.results, validated.results, strict=True):
        _same(one, other)
    _same(built.validation_summary, validated.validation_summary)

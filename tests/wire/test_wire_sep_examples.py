"""The JSON examples of the SEP-2624 text, parsed by the wire models and dumped again.

The SEP writes its examples in a TypeScript-like notation, so they were copied by
hand into ``sep_examples.json`` (name -> {kind, section, value}). Each entry
names the SEP section it was copied from; the sections used are:

- "Interceptor > Interface": the four ``priorityHint`` forms in the doc comment.
- "JSON-RPC Methods > Interceptor Discovery": the ``interceptors/list`` result.
- "JSON-RPC Methods > Interceptor Invocation": both ``interceptor/invoke``
  requests (their ``params``) and both responses (their ``result``).
- "Invocation Configuration and Context": the timeout and execution errors.
- "Execution Model > Priority Resolution": the phase-specific priority hints.
- "Chain Execution > Example Interceptor Chain": six descriptors.
- "Chain Execution > Example: Chain Entries with Overrides": three chain entries
  (``server: serverA`` and the like are connection handles, not JSON, so they
  were left out).
- "Chain Execution > Error Handling": the two chain errors.
- "Future Enhancements > Context Propagation": three results that carry the
  reserved ``contextUpdates`` field.

Transcription rules: ``//`` comments dropped, ``key?:`` written as ``key``,
string placeholders such as ``"..."`` kept as strings. An object placeholder
(``{...}`` or ``{ /* unchanged */ }``) became ``{}`` where the key is required
and was left out where it is optional.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from policy_engine.wire import (
    InterceptorDescriptor,
    InterceptorOverrides,
    InvokeParams,
    InvokeResult,
    ListInterceptorsResult,
    MutationResult,
    PriorityHint,
    ValidationResult,
    resolve_priority,
)

EXAMPLES: dict[str, dict[str, Any]] = json.loads(
    (Path(__file__).with_name("sep_examples.json")).read_text(encoding="utf-8")
)
INVOKE_RESULT = TypeAdapter[ValidationResult | MutationResult](InvokeResult)
PRIORITY_HINT = TypeAdapter[Any](PriorityHint)

# The SEP's ValidationResult and MutationResult interfaces list ``interceptor``,
# ``type`` and ``phase`` as required, but its interceptor/invoke response
# examples leave them out (they show only the type-specific fields). The
# conformance fixtures require all three, and so do the models. The values
# below come from the request each response answers (same JSON-RPC id); the
# "Future Enhancements" results name their interceptor and type but no phase,
# so they get "request" (the audit entry logs a tools/call request).
SHARED_RESULT_FIELDS: dict[str, dict[str, str]] = {
    "invocation/validation-response": {
        "interceptor": "parameter-validator",
        "type": "validation",
        "phase": "request",
    },
    "invocation/mutation-response": {
        "interceptor": "content-filter",
        "type": "mutation",
        "phase": "request",
    },
    "future/authenticator-result": {"phase": "request"},
    "future/rate-limiter-result": {"phase": "request"},
    "future/audit-logger-result": {"phase": "request"},
}


def names_of(kind: str) -> list[str]:
    return [name for name, entry in EXAMPLES.items() if entry["kind"] == kind]


def without_descriptor_defaults(descriptor: dict[str, Any]) -> dict[str, Any]:
    """The descriptor as the wire model should dump it: default values left out."""
    return {
        key: value
        for key, value in descriptor.items()
        if not (key == "mode" and value == "active") and not (key == "failOpen" and value is False)
    }


def test_every_example_has_a_known_kind_and_a_section() -> None:
    # Guards the transcription against entries silently going missing.
    kinds = Counter(entry["kind"] for entry in EXAMPLES.values())
    assert kinds == {
        "list_result": 1,
        "descriptor": 6,
        "chain_entry": 3,
        "invoke_params": 2,
        "invoke_result": 5,
        "priority_hint": 6,
        "error": 4,
    }
    assert all(entry["section"] for entry in EXAMPLES.values())


def test_list_example_writes_out_a_default_that_the_dump_drops() -> None:
    # The SEP's own list example spells out failOpen: false on pii-redactor; the
    # fixtures require defaults to be omitted, so the round trip drops it.
    (name,) = names_of("list_result")
    raw = EXAMPLES[name]["value"]
    pii = next(d for d in raw["interceptors"] if d["name"] == "pii-redactor")
    assert pii["failOpen"] is False
    dumped = ListInterceptorsResult.model_validate(raw).to_wire()
    dumped_pii = next(d for d in dumped["interceptors"] if d["name"] == "pii-redactor")
    assert "failOpen" not in dumped_pii


@pytest.mark.parametrize("name", names_of("list_result"))
def test_list_result_round_trips(name: str) -> None:
    raw = EXAMPLES[name]["value"]
    parsed = ListInterceptorsResult.model_validate(raw)
    assert [d.name for d in parsed.interceptors] == [d["name"] for d in raw["interceptors"]]
    assert parsed.to_wire() == {
        "interceptors": [without_descriptor_defaults(d) for d in raw["interceptors"]]
    }


@pytest.mark.parametrize("name", names_of("descriptor"))
def test_descriptor_round_trips(name: str) -> None:
    raw = EXAMPLES[name]["value"]
    assert InterceptorDescriptor.model_validate(raw).to_wire() == without_descriptor_defaults(raw)


@pytest.mark.parametrize("name", names_of("invoke_params"))
def test_invoke_params_round_trip(name: str) -> None:
    raw = EXAMPLES[name]["value"]
    parsed = InvokeParams.model_validate(raw)
    assert parsed.payload == raw["payload"]
    assert parsed.to_wire() == raw


def test_empty_config_in_invoke_params_is_kept() -> None:
    # ``config: {}`` is an empty object, not an absent one: it must survive the dump.
    params = InvokeParams.model_validate(EXAMPLES["invocation/validation-request"]["value"])
    assert params.config == {}
    assert params.to_wire()["config"] == {}


@pytest.mark.parametrize("name", names_of("invoke_result"))
def test_sep_shaped_invoke_result_lacks_the_fields_the_models_require(name: str) -> None:
    # Documents why SHARED_RESULT_FIELDS exists: the examples as printed in the
    # SEP do not parse, because they lack ``phase`` (and mostly ``type``).
    raw = EXAMPLES[name]["value"]
    assert set(SHARED_RESULT_FIELDS[name]).isdisjoint(raw)
    with pytest.raises(ValidationError):
        INVOKE_RESULT.validate_python(raw)


@pytest.mark.parametrize("name", names_of("invoke_result"))
def test_invoke_result_round_trips_once_shared_fields_are_added(name: str) -> None:
    raw = {**EXAMPLES[name]["value"], **SHARED_RESULT_FIELDS[name]}
    parsed = INVOKE_RESULT.validate_python(raw)
    expected_class = ValidationResult if raw["type"] == "validation" else MutationResult
    assert type(parsed) is expected_class
    assert parsed.to_wire() == raw


def test_reserved_result_fields_survive_the_round_trip() -> None:
    # ``signature`` and ``contextUpdates`` are reserved for the future; a peer
    # that sends them must not have them stripped by an intermediary.
    validation = {
        **EXAMPLES["invocation/validation-response"]["value"],
        **SHARED_RESULT_FIELDS["invocation/validation-response"],
    }
    dumped = INVOKE_RESULT.validate_python(validation).to_wire()
    assert dumped["signature"] == {"algorithm": "ed25519", "publicKey": "...", "value": "..."}
    future = {
        **EXAMPLES["future/authenticator-result"]["value"],
        **SHARED_RESULT_FIELDS["future/authenticator-result"],
    }
    dumped = INVOKE_RESULT.validate_python(future).to_wire()
    assert dumped["contextUpdates"]["interceptorState"]["principal"]["id"] == "user-123"


@pytest.mark.parametrize("name", names_of("chain_entry"))
def test_chain_entry_round_trips(name: str) -> None:
    raw = EXAMPLES[name]["value"]
    descriptor = InterceptorDescriptor.model_validate(raw["interceptor"])
    overrides = InterceptorOverrides.model_validate(raw["overrides"])
    assert descriptor.to_wire() == without_descriptor_defaults(raw["interceptor"])
    # Overrides have no defaults of their own: every key the invoker set stays,
    # including ``mode: "active"``, which promotes an audit interceptor.
    assert overrides.to_wire() == raw["overrides"]


def test_active_override_is_kept_although_active_is_the_descriptor_default() -> None:
    raw = EXAMPLES["chain-overrides/audit-logger"]["value"]
    assert InterceptorDescriptor.model_validate(raw["interceptor"]).mode == "audit"
    overrides = InterceptorOverrides.model_validate(raw["overrides"])
    assert overrides.mode == "active"
    assert overrides.to_wire() == {"mode": "active"}


def test_override_priority_beats_the_declared_one_in_the_sep_example() -> None:
    raw = EXAMPLES["chain-overrides/pii-redactor"]["value"]
    declared = InterceptorDescriptor.model_validate(raw["interceptor"]).priority_hint
    override = InterceptorOverrides.model_validate(raw["overrides"]).priority_hint
    assert resolve_priority(declared, "request") == -1000
    assert resolve_priority(declared, "response") == 1000
    assert resolve_priority(declared, "request", override) == -2000
    assert resolve_priority(declared, "response", override) == 2000


@pytest.mark.parametrize("name", names_of("priority_hint"))
def test_priority_hint_round_trips(name: str) -> None:
    raw = EXAMPLES[name]["value"]
    parsed = PRIORITY_HINT.validate_python(raw)
    assert PRIORITY_HINT.dump_python(parsed, mode="json", by_alias=True, exclude_none=True) == raw

"""The JSON-RPC error helpers: codes, messages and structured ``data``.

Where the SEP prints an error object, the helper's ``to_wire()`` is compared
with the transcription in ``sep_examples.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from policy_engine.wire import InterceptorError
from policy_engine.wire.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    TIMEOUT,
    chain_mutation_failed,
    chain_validation_failed,
    execution_failed,
    invalid_params,
    not_hooked,
    timed_out,
    unknown_interceptor,
    validation_error_item,
)

EXAMPLES: dict[str, dict[str, Any]] = json.loads(
    Path(__file__).with_name("sep_examples.json").read_text(encoding="utf-8")
)


def sep_error(name: str) -> dict[str, Any]:
    entry = EXAMPLES[name]
    assert entry["kind"] == "error"
    value: dict[str, Any] = entry["value"]
    return value


def test_codes_are_the_json_rpc_and_sep_ones() -> None:
    assert (INVALID_PARAMS, INTERNAL_ERROR, TIMEOUT) == (-32602, -32603, -32000)


def test_unknown_interceptor() -> None:
    error = unknown_interceptor("conf/does-not-exist")
    assert error.to_wire() == {
        "code": -32602,
        "message": "Unknown interceptor: conf/does-not-exist",
        "data": {"reason": "unknown interceptor", "interceptor": "conf/does-not-exist"},
    }


def test_unknown_interceptor_lists_known_names_only_when_given() -> None:
    error = unknown_interceptor("nope", known=["a", "b"])
    assert error.code == -32602
    assert error.to_wire()["data"]["known"] == ["a", "b"]
    assert "known" not in unknown_interceptor("nope", known=[]).to_wire()["data"]


def test_not_hooked() -> None:
    assert not_hooked("guard", "prompts/get", "response").to_wire() == {
        "code": -32602,
        "message": "Interceptor guard does not hook prompts/get at phase response",
        "data": {
            "reason": "event not hooked",
            "interceptor": "guard",
            "event": "prompts/get",
            "phase": "response",
        },
    }


def test_invalid_params_carries_extra_fields() -> None:
    assert invalid_params("payload must be an object", field="payload").to_wire() == {
        "code": -32602,
        "message": "Invalid params",
        "data": {"reason": "payload must be an object", "field": "payload"},
    }


def test_execution_failed_matches_the_sep_example() -> None:
    # SEP "Invocation Configuration and Context > Error Handling".
    expected = sep_error("invocation/execution-error")
    error = execution_failed("content-filter", "Configuration invalid")
    assert error.code == -32603
    assert error.to_wire() == expected


def test_timeout_extends_the_sep_example_with_a_reason() -> None:
    # SEP "Timeout and Cancellation": data is {interceptor, timeoutMs, phase};
    # the helper adds reason "timeout" so every error data says what happened.
    expected = sep_error("invocation/timeout-error")
    wire = timed_out("slow-validator", 5000, "request").to_wire()
    assert wire == {**expected, "data": {**expected["data"], "reason": "timeout"}}
    assert wire["code"] == -32000


def test_chain_validation_failed_matches_the_sep_example() -> None:
    # SEP "Chain Execution > Error Handling", validation failure.
    expected = sep_error("chain-errors/validation-failed")
    item = validation_error_item("schema-validator", "error", "Required field missing")
    assert chain_validation_failed([item]).to_wire() == expected


def test_validation_error_item_path_is_optional() -> None:
    assert "path" not in validation_error_item("v", "warn", "m")
    assert validation_error_item("v", "warn", "m", path="$.a") == {
        "interceptor": "v",
        "severity": "warn",
        "message": "m",
        "path": "$.a",
    }


def test_chain_mutation_failed_matches_the_sep_example() -> None:
    # SEP "Chain Execution > Error Handling", mutation failure. The SEP's data
    # also has lastValidPayload; the helper never echoes payload content (SEP
    # security section, information disclosure), so it is not transcribed.
    expected = sep_error("chain-errors/mutation-failed")
    assert chain_mutation_failed("content-filter").to_wire() == expected


def test_chain_mutation_failed_with_a_reason() -> None:
    wire = chain_mutation_failed("content-filter", "handler raised").to_wire()
    assert wire == {
        "code": -32603,
        "message": "Interceptor mutation failed",
        "data": {"failedInterceptor": "content-filter", "reason": "handler raised"},
    }


def test_error_without_data_has_no_data_key() -> None:
    error = InterceptorError(-32601, "Method not found")
    assert error.to_wire() == {"code": -32601, "message": "Method not found"}


def test_interceptor_error_is_an_exception_with_its_message() -> None:
    error = execution_failed("content-filter", "boom")
    with pytest.raises(InterceptorError) as caught:
        raise error
    assert str(caught.value) == "Interceptor execution failed"
    assert caught.value.code == -32603
    assert caught.value.data == {"interceptor": "content-filter", "reason": "boom"}
    assert repr(error).startswith("InterceptorError(-32603, 'Interceptor execution failed'")


def test_error_wire_is_json_serializable() -> None:
    for error in (
        unknown_interceptor("x", ["y"]),
        not_hooked("x", "tools/call", "request"),
        timed_out("x", 10, "response"),
        chain_validation_failed([validation_error_item("x", "error", "bad", "$.a")]),
        chain_mutation_failed("x", "boom"),
    ):
        assert json.loads(json.dumps(error.to_wire())) == error.to_wire()

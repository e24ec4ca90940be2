"""Every wire object in the public SEP-2624 conformance fixtures, through the models.

The fixtures are read with the conformance runner's loader and compared the
way the runner compares a server's answers: volatile keys scrubbed, then
RFC 8785 canonical JSON equal to the fixture's ``canonical`` text. These
tests pin the models on their own, so a model bug and a server bug are told
apart (the runner's end-to-end tests are in tests/conformance/).
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter

from policy_engine.conformance.adapter import declared_descriptor
from policy_engine.conformance.jcs import canonicalize
from policy_engine.conformance.suite import (
    ApplyStep,
    Fixture,
    InvokeStep,
    ListStep,
    load_suite,
    scrub,
)
from policy_engine.wire import (
    ChainExecutionParams,
    InvokeParams,
    InvokeResult,
    ListInterceptorsResult,
    MutationResult,
    ValidationResult,
)

SUITE = load_suite()
INVOKE_RESULT = TypeAdapter[ValidationResult | MutationResult](InvokeResult)


def _with(step_type: type[Any]) -> list[Any]:
    return [
        pytest.param(fixture, id=fixture.id)
        for fixture in SUITE.fixtures
        if any(isinstance(step, step_type) for step in fixture.steps)
    ]


def _steps(fixture: Fixture, step_type: type[Any]) -> list[Any]:
    return [step for step in fixture.steps if isinstance(step, step_type)]


@pytest.mark.parametrize("fixture", _with(ListStep))
def test_list_results_parse_and_canonicalize(fixture: Fixture) -> None:
    for step in _steps(fixture, ListStep):
        parsed = ListInterceptorsResult.model_validate(step.result)
        assert canonicalize(scrub(parsed.to_wire(), fixture.volatile)) == step.canonical


@pytest.mark.parametrize("fixture", _with(ListStep))
def test_list_results_match_descriptors_built_from_declarations(fixture: Fixture) -> None:
    # The list fixtures return the registered interceptors in order, filtered by
    # event when the step has one; built from the declarations, they must dump
    # to the same canonical text (no null optionals, no defaults written out).
    descriptors = [declared_descriptor(entry) for entry in fixture.interceptors]
    for step in _steps(fixture, ListStep):
        kept = [d for d in descriptors if step.event is None or d.hooks_event(step.event)]
        result = ListInterceptorsResult(interceptors=kept)
        assert canonicalize(result.to_wire()) == step.canonical


@pytest.mark.parametrize("fixture", _with(InvokeStep))
def test_invoke_params_parse(fixture: Fixture) -> None:
    for step in _steps(fixture, InvokeStep):
        params = InvokeParams.model_validate(step.params)
        assert params.name == step.params["name"]
        assert params.payload == step.params["payload"]
        assert params.to_wire() == step.params


@pytest.mark.parametrize("fixture", _with(InvokeStep))
def test_invoke_results_parse_and_canonicalize(fixture: Fixture) -> None:
    for step in _steps(fixture, InvokeStep):
        if step.error_code is not None:
            assert step.canonical is None
            continue
        parsed = INVOKE_RESULT.validate_python(step.result)
        expected_class = ValidationResult if step.result["type"] == "validation" else MutationResult
        assert type(parsed) is expected_class
        assert canonicalize(scrub(parsed.to_wire(), fixture.volatile)) == step.canonical


@pytest.mark.parametrize("fixture", _with(ApplyStep))
def test_apply_steps_parse_as_chain_params(fixture: Fixture) -> None:
    for step in _steps(fixture, ApplyStep):
        raw: dict[str, Any] = {"event": step.event, "phase": step.phase, "payload": step.payload}
        if step.session_id is not None:
            raw["context"] = {"sessionId": step.session_id}
        params = ChainExecutionParams.model_validate(raw)
        assert params.to_wire() == raw
        if step.session_id is not None:
            assert params.context is not None
            assert params.context.session_id == step.session_id


@pytest.mark.parametrize("fixture", [pytest.param(f, id=f.id) for f in SUITE.fixtures])
def test_declarations_dump_only_non_default_policy(fixture: Fixture) -> None:
    for declaration in fixture.interceptors:
        dumped = declared_descriptor(declaration).to_wire()
        assert dumped.get("mode") == declaration.get("mode")
        assert dumped.get("failOpen") == declaration.get("failOpen")
        assert set(dumped) <= {"name", "type", "hooks", "mode", "failOpen"}


def test_the_fixtures_exercise_every_step_kind() -> None:
    # If the fixture copy were emptied or reshaped, the tests above would pass
    # vacuously; this pins the number of wire objects they actually check.
    counts = {"list": 0, "invoke-result": 0, "invoke-error": 0, "apply": 0}
    for fixture in SUITE.select(("protocol/",)):
        for step in fixture.steps:
            if isinstance(step, InvokeStep):
                counts["invoke-result" if step.error_code is None else "invoke-error"] += 1
            else:
                counts[step.op] += 1
    assert counts == {"list": 2, "invoke-result": 4, "invoke-error": 1, "apply": 7}
    assert len(SUITE.fixtures) == 24

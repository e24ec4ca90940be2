"""Every wire object in the public SEP-2624 conformance fixtures, through the models.

The fixtures ship inside the package (``policy_engine/conformance/suite``); a
missing folder is a broken checkout, so the tests fail rather than skip.

Comparison follows the fixtures' README: delete the ``volatile`` keys at any
depth, then compare a compact, key-sorted JSON dump with ``expect.canonical``.
All fixture data is ASCII with small integers, for which that dump equals
RFC 8785 (JCS) output.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from policy_engine.conformance import SUITE_DIR
from policy_engine.wire import (
    ChainExecutionParams,
    InterceptorDescriptor,
    InvokeParams,
    InvokeResult,
    ListInterceptorsResult,
    MutationResult,
    ValidationResult,
)

CONFORMANCE = SUITE_DIR
PROTOCOL = CONFORMANCE / "fixtures" / "protocol"
BEHAVIOR = CONFORMANCE / "fixtures" / "behavior"
MISSING = f"conformance fixtures not found at {CONFORMANCE}: the package copy is incomplete"
INVOKE_RESULT = TypeAdapter[ValidationResult | MutationResult](InvokeResult)


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def scrub(value: Any, volatile: frozenset[str]) -> Any:
    """``value`` with every key in ``volatile`` deleted, at any depth."""
    if isinstance(value, dict):
        return {k: scrub(v, volatile) for k, v in value.items() if k not in volatile}
    if isinstance(value, list):
        return [scrub(item, volatile) for item in value]
    return value


def fixture_files(folder: Path) -> list[Any]:
    """One pytest param per fixture file, or one failing param if the folder is missing."""
    if not folder.is_dir():
        return [pytest.param(None, id="fixtures-missing")]
    return [pytest.param(path, id=path.stem) for path in sorted(folder.glob("*.json"))]


def load(path: Path | None) -> dict[str, Any]:
    if path is None:
        pytest.fail(MISSING)
    fixture: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return fixture


def steps(fixture: dict[str, Any], op: str) -> list[dict[str, Any]]:
    return [step for step in fixture["steps"] if step["op"] == op]


def declared_descriptor(declaration: dict[str, Any]) -> InterceptorDescriptor:
    """The descriptor a fixture interceptor declaration stands for.

    ``phases: "both"`` is fixture shorthand for two hooks, request then response.
    """
    phases = ["request", "response"] if declaration["phases"] == "both" else [declaration["phases"]]
    raw: dict[str, Any] = {
        "name": declaration["name"],
        "type": declaration["type"],
        "hooks": [{"events": declaration["events"], "phase": phase} for phase in phases],
    }
    for key in ("mode", "failOpen"):
        if key in declaration:
            raw[key] = declaration[key]
    return InterceptorDescriptor.model_validate(raw)


def test_fixture_folder_holds_every_protocol_fixture_of_the_manifest() -> None:
    if not CONFORMANCE.is_dir():
        pytest.fail(MISSING)
    manifest = json.loads((CONFORMANCE / "manifest.json").read_text(encoding="utf-8"))
    listed = {
        CONFORMANCE / entry["file"] for entry in manifest["fixtures"] if entry["kind"] == "protocol"
    }
    assert len(listed) == 14
    assert listed == set(PROTOCOL.glob("*.json"))


@pytest.mark.parametrize("path", fixture_files(PROTOCOL))
def test_list_results_parse_and_canonicalize(path: Path | None) -> None:
    fixture = load(path)
    volatile = frozenset(fixture["volatile"])
    for step in steps(fixture, "list"):
        parsed = ListInterceptorsResult.model_validate(step["expect"]["result"])
        assert canonical(scrub(parsed.to_wire(), volatile)) == step["expect"]["canonical"]


@pytest.mark.parametrize("path", fixture_files(PROTOCOL))
def test_list_results_match_descriptors_built_from_declarations(path: Path | None) -> None:
    # The list fixtures return the registered interceptors in order, filtered by
    # event when the step has one; built from the declarations, they must dump
    # to the same canonical text (no null optionals, no defaults written out).
    fixture = load(path)
    descriptors = [declared_descriptor(d) for d in fixture["interceptors"]]
    for step in steps(fixture, "list"):
        event = step["event"]
        kept = [d for d in descriptors if event is None or d.hooks_event(event)]
        result = ListInterceptorsResult(interceptors=kept)
        assert canonical(result.to_wire()) == step["expect"]["canonical"]


@pytest.mark.parametrize("path", fixture_files(PROTOCOL))
def test_invoke_params_parse(path: Path | None) -> None:
    fixture = load(path)
    for step in steps(fixture, "invoke"):
        params = InvokeParams.model_validate(step["params"])
        assert params.name == step["params"]["name"]
        assert params.payload == step["params"]["payload"]
        assert params.to_wire() == step["params"]


@pytest.mark.parametrize("path", fixture_files(PROTOCOL))
def test_invoke_results_parse_and_canonicalize(path: Path | None) -> None:
    fixture = load(path)
    volatile = frozenset(fixture["volatile"])
    for step in steps(fixture, "invoke"):
        expect = step["expect"]
        if "result" not in expect:
            assert set(expect) == {"errorCode"}
            continue
        parsed = INVOKE_RESULT.validate_python(expect["result"])
        expected_class = (
            ValidationResult if expect["result"]["type"] == "validation" else (MutationResult)
        )
        assert type(parsed) is expected_class
        assert canonical(scrub(parsed.to_wire(), volatile)) == expect["canonical"]


@pytest.mark.parametrize("path", fixture_files(PROTOCOL) + fixture_files(BEHAVIOR))
def test_apply_steps_parse_as_chain_params(path: Path | None) -> None:
    fixture = load(path)
    for step in steps(fixture, "apply"):
        raw = {key: step[key] for key in ("event", "phase", "payload")}
        if step["context"] is not None:
            raw["context"] = step["context"]
        params = ChainExecutionParams.model_validate(raw)
        assert params.to_wire() == raw
        if step["context"] is not None:
            assert params.context is not None
            assert params.context.session_id == step["context"]["sessionId"]


@pytest.mark.parametrize("path", fixture_files(PROTOCOL) + fixture_files(BEHAVIOR))
def test_declarations_dump_only_non_default_policy(path: Path | None) -> None:
    fixture = load(path)
    for declaration in fixture["interceptors"]:
        dumped = declared_descriptor(declaration).to_wire()
        assert dumped.get("mode") == declaration.get("mode")
        assert dumped.get("failOpen") == declaration.get("failOpen")
        assert set(dumped) <= {"name", "type", "hooks", "mode", "failOpen"}


def test_the_fixtures_exercise_every_step_kind() -> None:
    # If the fixture copy were emptied or reshaped, the tests above would pass
    # vacuously; this pins the number of wire objects they actually check.
    if not PROTOCOL.is_dir():
        pytest.fail(MISSING)
    counts = {"list": 0, "invoke-result": 0, "invoke-error": 0, "apply": 0}
    for path in PROTOCOL.glob("*.json"):
        for step in load(path)["steps"]:
            if step["op"] == "invoke":
                counts["invoke-result" if "result" in step["expect"] else "invoke-error"] += 1
            else:
                counts[step["op"]] += 1
    assert counts == {"list": 2, "invoke-result": 4, "invoke-error": 1, "apply": 7}

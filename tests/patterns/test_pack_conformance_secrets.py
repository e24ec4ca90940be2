"""The shipped secrets pack removes every fake secret of the conformance suite.

The suite's redaction fixtures name the verbatim values that must not leave
the chain (`forbids`); each step's payload goes through `secret-redactor`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from policy_engine.compiler import compile_policies
from policy_engine.wire import MutationResult

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "policy_engine" / "conformance" / "suite" / "fixtures" / "behavior"


def _forbidding_steps() -> list[Any]:
    steps = []
    for path in sorted(FIXTURES.glob("*.json")):
        fixture = json.loads(path.read_text(encoding="utf-8"))
        for index, step in enumerate(fixture.get("steps", [])):
            if step.get("expect", {}).get("forbids"):
                steps.append(pytest.param(step, id=f"{path.stem}-{index}"))
    return steps


STEPS = _forbidding_steps()


def test_the_suite_has_the_three_secrets() -> None:
    forbidden = {value for param in STEPS for value in param.values[0]["expect"]["forbids"]}
    assert {value[:4] for value in forbidden} == {"AKIA", "ghp_", "sk_l"}


@pytest.mark.parametrize("step", STEPS)
def test_secret_redactor_removes_what_the_suite_forbids(step: dict[str, Any]) -> None:
    policies = compile_policies([ROOT / "policies"])
    result = policies.invoke_sync("secret-redactor", step["event"], step["phase"], step["payload"])
    assert isinstance(result, MutationResult)
    assert result.modified
    text = json.dumps(result.payload)
    for value in step["expect"]["forbids"]:
        assert value not in text
    assert "[SECRET:" in text

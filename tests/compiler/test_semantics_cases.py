"""The language's semantics as data: every case in `cases/*.json` is one invocation.

Each file is a list of cases::

    {"note": "...", "policy": "<policy text>",
     "invoke": {"name", "event", "phase", "payload", "config"?, "context"?},
     "want": <wire result without durationMs and info>,     # or
     "want_error": {"code": -32602, "data_subset": {...}},
     "want_info": {...}?}                                     # mutators: info, exactly

Expected results were worked out by hand from the documented semantics
(docs/language.md), not copied from the implementation. `known_bugs.json`
holds cases where the implementation disagrees; they run as strict xfails, so
fixing a bug turns its case into a failure until it moves to its group file.

Every case also checks that the caller's payload, config and context come
back untouched (the compiler copies on write).
"""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from policy_engine.compiler import PolicySet, compile_sources
from policy_engine.wire.errors import InterceptorError

CASES_DIR = Path(__file__).parent / "cases"
KNOWN_BUGS = "known_bugs.json"
CASE_KEYS = {"note", "policy", "invoke", "want", "want_error", "want_info", "bug"}
INVOKE_KEYS = {"name", "event", "phase", "payload", "config", "context"}
MIN_CASES = 120


def _load() -> dict[str, list[dict[str, Any]]]:
    return {
        path.name: json.loads(path.read_text(encoding="utf-8"))
        for path in sorted(CASES_DIR.glob("*.json"))
    }


GROUPS = _load()


def _params() -> list[Any]:
    params = []
    for file, cases in GROUPS.items():
        marks = []
        if file == KNOWN_BUGS:
            marks = [pytest.mark.xfail(strict=True, reason="known bug, see the case's `bug`")]
        for index, case in enumerate(cases):
            case_id = f"{Path(file).stem}:{index}:{case['note']}"
            params.append(pytest.param(case, id=case_id, marks=marks))
    return params


@cache
def _compiled(policy: str) -> PolicySet:
    return compile_sources({"case.policy": policy})


def _canonical(value: Any) -> str:
    """Type-strict JSON text: `true` and `1`, `1` and `"1"` stay different."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _invoke(policy_set: PolicySet, invoke: dict[str, Any]) -> Any:
    return policy_set.invoke_sync(
        invoke["name"],
        invoke["event"],
        invoke["phase"],
        invoke["payload"],
        invoke.get("config"),
        invoke.get("context"),
    )


@pytest.mark.parametrize("case", _params())
def test_case(case: dict[str, Any]) -> None:
    policy_set = _compiled(case["policy"])
    invoke = copy.deepcopy(case["invoke"])
    before = _canonical(invoke)
    if "want_error" in case:
        want_error = case["want_error"]
        with pytest.raises(InterceptorError) as raised:
            _invoke(policy_set, invoke)
        assert raised.value.code == want_error["code"], raised.value
        data = raised.value.data or {}
        for key, value in want_error.get("data_subset", {}).items():
            assert key in data, f"error data {data} lacks `{key}`"
            assert _canonical(data[key]) == _canonical(value), f"data[{key!r}] is {data[key]!r}"
    else:
        result = _invoke(policy_set, invoke)
        wire = result.to_wire()
        assert isinstance(wire.pop("durationMs"), int | float)
        info = wire.pop("info", None)
        assert wire == case["want"]
        assert _canonical(wire) == _canonical(case["want"])
        if "want_info" in case:
            assert _canonical(info) == _canonical(case["want_info"])
        if wire["type"] == "mutation" and not wire["modified"]:
            assert info is None
    assert _canonical(invoke) == before, "invoke_sync changed its input"


def test_case_files_are_well_formed() -> None:
    total = 0
    for file, cases in GROUPS.items():
        notes: set[str] = set()
        assert isinstance(cases, list), f"{file} is not a list"
        assert cases or file == KNOWN_BUGS, f"{file} is empty"
        for case in cases:
            where = f"{file}: {case.get('note')!r}"
            assert set(case) <= CASE_KEYS, f"{where} has unknown keys {set(case) - CASE_KEYS}"
            assert {"note", "policy", "invoke"} <= set(case), where
            assert ("want" in case) != ("want_error" in case), f"{where}: want xor want_error"
            assert set(case["invoke"]) <= INVOKE_KEYS, where
            assert {"name", "event", "phase", "payload"} <= set(case["invoke"]), where
            assert ("bug" in case) == (file == KNOWN_BUGS), f"{where}: `bug` only in {KNOWN_BUGS}"
            assert case["note"] not in notes, f"duplicate note in {where}"
            notes.add(case["note"])
            total += 1
    assert total >= MIN_CASES, f"only {total} cases"


def test_known_bugs_stay_few() -> None:
    assert len(GROUPS.get(KNOWN_BUGS, [])) <= 10

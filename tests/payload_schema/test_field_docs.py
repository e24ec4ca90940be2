"""describe_path and fields_under, the schema queries behind editor hovers and completion."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from policy_engine.language.path_syntax import parse_path
from policy_engine.language.payload_schema import describe_path, fields_under

DATA = json.loads((Path(__file__).parent / "field_docs.json").read_text("utf-8"))


@pytest.mark.parametrize("case", DATA["describe"], ids=lambda c: f"{c['event']} {c['path']}")
def test_describe_path(case: dict[str, Any]) -> None:
    found = describe_path(case["event"], case["phase"], parse_path(case["path"]))
    if case["type"] is None:
        assert found is None
        return
    assert found is not None
    assert found.type == case["type"]
    if case["description"] is None:
        assert found.description is None
    else:
        assert found.description is not None
        assert found.description.startswith(case["description"])


@pytest.mark.parametrize("case", DATA["fields"], ids=lambda c: f"{c['event']} {c['path']}")
def test_fields_under(case: dict[str, Any]) -> None:
    names = [f.name for f in fields_under(case["event"], case["phase"], parse_path(case["path"]))]
    assert names == sorted(names)
    assert set(case["includes"]) <= set(names)
    if not case["includes"]:
        assert names == []

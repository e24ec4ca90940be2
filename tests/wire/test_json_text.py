"""The strict JSON loader every entry point uses: cases in ``cases/json_text.json``.

``DIGITS5000`` and ``DEEP300`` stand for texts too long to keep in the file.
Each case runs on both ``str`` and ``bytes`` input.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from policy_engine.wire.json_text import JSONTextError, loads

CASES: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "cases" / "json_text.json").read_text(encoding="utf-8")
)
_GENERATED = {"DIGITS5000": "1" * 5000, "DEEP300": "[" * 300 + "]" * 300}


@pytest.mark.parametrize("as_bytes", [False, True], ids=["str", "bytes"])
@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_json_text_case(case: dict[str, Any], as_bytes: bool) -> None:
    text = _GENERATED.get(case["text"], case["text"])
    data: str | bytes = text.encode("utf-8", "surrogatepass") if as_bytes else text
    if "reason" in case:
        with pytest.raises(JSONTextError) as caught:
            loads(data)
        assert caught.value.reason == case["reason"]
        # The message is the reason and at most a position: never the text.
        assert str(caught.value).partition(" (line")[0] == case["reason"]
    else:
        assert loads(data) == case["value"]


def test_nothing_non_finite_gets_through() -> None:
    for text in ("NaN", "Infinity", "-Infinity", "1e309", "-1e309", "[[[1e999]]]"):
        with pytest.raises(JSONTextError):
            loads(text)

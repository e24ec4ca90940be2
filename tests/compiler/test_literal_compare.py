"""A comparison with a literal, fixed when the policy compiles, means what `compare` means."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policy_engine.compiler import compile_sources
from policy_engine.compiler.values import compare, literal_test

OPS = ["==", "!=", "<", "<=", ">", ">="]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(-3, 3, allow_nan=False),
    st.sampled_from(["", "a", "1", "true"]),
)
VALUES = st.one_of(
    SCALARS,
    st.lists(SCALARS, max_size=2),
    st.dictionaries(st.text(max_size=1), SCALARS, max_size=1),
)


@pytest.mark.parametrize(
    ("op", "literal", "value", "expected"),
    [
        ("==", 1, True, False),
        ("==", 0, False, False),
        ("==", True, 1, False),
        ("==", 1.0, 1, True),
        ("==", 1, "1", False),
        ("==", None, False, False),
        ("==", "", None, False),
        ("!=", 1, True, True),
        ("<", 2, True, False),
        (">=", 1, 1.0, True),
        (">", "a", "b", False),
    ],
)
def test_json_equality_and_order_edges(op: str, literal: Any, value: Any, expected: bool) -> None:
    test = literal_test(op, literal)
    assert test is not None
    assert test(value) is expected
    assert compare(op, value, literal) is expected


@settings(max_examples=500)
@given(st.sampled_from(OPS), SCALARS, VALUES)
def test_a_literal_test_agrees_with_compare(op: str, literal: Any, value: Any) -> None:
    test = literal_test(op, literal)
    assert test is not None
    got = test(value)
    assert isinstance(got, bool)
    assert got == compare(op, value, literal)


@pytest.mark.parametrize("op", OPS)
def test_list_literals_keep_the_general_comparison(op: str) -> None:
    if op in ("==", "!="):
        assert literal_test(op, (1, 2)) is None
    else:
        test = literal_test(op, (1, 2))
        assert test is not None and not test(1)


@pytest.mark.parametrize(
    ("condition", "event", "expected"),
    [
        ('event == "tools/call"', "tools/call", True),
        ('event == "tools/call"', "prompts/get", False),
        ('event != "tools/call"', "prompts/get", True),
        ('not event == "tools/call"', "tools/call", False),
        ('phase == "request"', "tools/call", True),
        ('phase != "request"', "tools/call", False),
        ("$.arguments.n > 3", "tools/call", True),
        ("not $.arguments.n > 3", "tools/call", False),
        ("all $.arguments.xs[*] >= 2", "tools/call", True),
        ("all $.arguments.xs[*] > 2", "tools/call", False),
        ("$.arguments.flag == true", "tools/call", False),
        ("$.arguments.one == 1", "tools/call", True),
        ("$.arguments.one == true", "tools/call", False),
        ("$.arguments.none == null", "tools/call", True),
    ],
)
def test_literal_comparisons_in_rules(condition: str, event: str, expected: bool) -> None:
    source = (
        'validator v "x" version "1.0.0" {\n'
        "  on tools/call, prompts/get request\n"
        f'  deny if {condition} "fired" code fired\n'
        "}\n"
    )
    policy = compile_sources({"v.policy": source})
    payload = {
        "name": "t",
        "arguments": {"n": 4, "xs": [2, 3], "flag": 1, "one": 1, "none": None},
    }
    if event == "prompts/get":
        payload = {"name": "t", "arguments": {}}
    result = policy.invoke_sync("v", event, "request", payload)
    assert (not result.valid) is expected

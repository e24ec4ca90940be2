"""Invoke config against declared params: -32602 naming `config.<field>`, defaults filled in."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from policy_engine.compiler.config import resolve_config
from policy_engine.language import ast
from policy_engine.language.diagnostics import UNKNOWN_SPAN
from policy_engine.language.model import NO_DEFAULT, ResolvedParam
from policy_engine.wire.errors import INVALID_PARAMS, InterceptorError


def param(name: str, base: str, is_list: bool = False, default: Any = NO_DEFAULT) -> ResolvedParam:
    return ResolvedParam(name, ast.TypeRef(base, is_list), default, UNKNOWN_SPAN)  # type: ignore[arg-type]


PARAMS = {
    "max": param("max", "int", default=3),
    "ratio": param("ratio", "number", default=0.5),
    "tag": param("tag", "string"),
    "on": param("on", "bool", default=True),
    "names": param("names", "string", is_list=True, default=["a"]),
}


def error_of(config: dict[str, Any] | None, params: dict[str, ResolvedParam] = PARAMS) -> Any:
    with pytest.raises(InterceptorError) as raised:
        resolve_config("guard", params, config)
    assert raised.value.code == INVALID_PARAMS
    assert raised.value.data is not None
    assert raised.value.data["interceptor"] == "guard"
    return raised.value.data


def test_defaults_fill_in_what_config_leaves_out() -> None:
    resolved = resolve_config("guard", PARAMS, {"tag": "t"})
    assert resolved == {"max": 3, "ratio": 0.5, "tag": "t", "on": True, "names": ["a"]}


def test_given_values_win() -> None:
    config = {"tag": "t", "max": 10, "ratio": 2, "on": False, "names": []}
    assert resolve_config("guard", PARAMS, config) == config


def test_no_params_and_no_config() -> None:
    assert resolve_config("guard", {}, None) == {}
    assert resolve_config("guard", {}, {}) == {}


def test_unknown_field_names_the_allowed_ones() -> None:
    data = error_of({"tag": "t", "maxx": 1})
    assert data["field"] == "config.maxx"
    assert data["allowed"] == ["max", "names", "on", "ratio", "tag"]
    assert error_of({"x": 1}, {})["field"] == "config.x"


def test_missing_required_field() -> None:
    data = error_of({"max": 1})
    assert data["field"] == "config.tag"
    assert "required" in data["reason"]
    assert error_of(None)["field"] == "config.tag"


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("max", "3", "int"),
        ("max", True, "int"),
        ("max", 1.5, "int"),
        ("max", None, "int"),
        ("ratio", False, "number"),
        ("ratio", "0.5", "number"),
        ("tag", 1, "string"),
        ("on", 1, "bool"),
        ("on", "true", "bool"),
        ("names", "a", "list[string]"),
        ("names", ["a", 1], "list[string]"),
        ("names", [None], "list[string]"),
    ],
)
def test_wrong_types(field: str, value: Any, expected: str) -> None:
    config = {"tag": "t", field: value}
    data = error_of(config)
    assert data["field"] == f"config.{field}"
    assert data["expected"] == expected


@pytest.mark.parametrize(
    ("field", "value"), [("max", 2.0), ("max", -7), ("ratio", 3), ("ratio", 1e-3)]
)
def test_numbers_that_fit(field: str, value: Any) -> None:
    assert resolve_config("guard", PARAMS, {"tag": "t", field: value})[field] == value


def test_the_unknown_field_is_reported_before_a_missing_one() -> None:
    assert error_of({"zzz": 1})["field"] == "config.zzz"


def test_the_error_never_echoes_the_value() -> None:
    data = error_of({"tag": "t", "max": "s3cr3t-value"})
    assert "s3cr3t-value" not in repr(data)


@given(st.integers(min_value=-(2**40), max_value=2**40), st.booleans())
def test_ints_fit_int_and_number_but_bools_fit_neither(value: int, flag: bool) -> None:
    resolved = resolve_config("guard", PARAMS, {"tag": "t", "max": value, "ratio": value})
    assert resolved["max"] == value and resolved["ratio"] == value
    assert error_of({"tag": "t", "max": flag})["field"] == "config.max"
    assert error_of({"tag": "t", "ratio": flag})["field"] == "config.ratio"


def test_config_errors_through_a_policy_set() -> None:
    from policy_engine.compiler import compile_sources

    policy_set = compile_sources(
        {
            "c.policy": "validator v {\n  on app/run request\n  param n: int = 1\n"
            '  deny if $.x > param.n "over"\n}'
        }
    )
    assert policy_set.invoke_sync("v", "app/run", "request", {"x": 2}).to_wire()["valid"] is False
    assert policy_set.invoke_sync("v", "app/run", "request", {"x": 2}, {"n": 5}).to_wire()["valid"]
    with pytest.raises(InterceptorError) as raised:
        policy_set.invoke_sync("v", "app/run", "request", {"x": 2}, {"n": "5"})
    assert raised.value.data is not None
    assert raised.value.data["field"] == "config.n"


def test_an_invoke_without_config_reads_the_defaults_resolved_once() -> None:
    from policy_engine.compiler import compile_sources

    source = """
validator v "Params" {
  on app/run request
  param limit: int = 3
  deny if $.n > param.limit "over {value}" code over
}
validator r "A required param" {
  on app/run request
  param must: string
  deny if $.n == param.must "same" code same
}
"""
    policy = compile_sources({"v.policy": source})
    compiled = policy.interceptors["v"]
    assert compiled.default_config == {"limit": 3}
    assert compiled.default_config is compiled.default_config
    verdicts = [
        policy.invoke_sync("v", "app/run", "request", {"n": n}, config=config).valid  # type: ignore[union-attr]
        for n, config in ((4, None), (4, {}), (4, {"limit": 5}), (2, None))
    ]
    assert verdicts == [False, False, True, True]
    for _ in range(2):  # a required param refuses every time, never a cached default
        with pytest.raises(InterceptorError) as raised:
            policy.invoke_sync("r", "app/run", "request", {"n": 1})
        assert raised.value.code == INVALID_PARAMS

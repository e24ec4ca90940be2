"""Golden tests: ``golden/NAME.policy`` formats to ``golden/NAME.policy.formatted``.

Each input must also round-trip (its AST survives formatting), format to a
fixed point, and keep every comment in order. Together the inputs use every
AST node type and every keyword variant; a test checks that too.

After an intended layout change, regenerate the expected files and review
the diff before committing::

    POLICYC_UPDATE_GOLDEN=1 pytest tests/formatter
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from policy_engine.language import ast
from policy_engine.language.formatter import format_source
from policy_engine.language.parser import parse_source

GOLDEN = Path(__file__).parent / "golden"
INPUTS = sorted(GOLDEN.glob("*.policy"))
UPDATE = os.environ.get("POLICYC_UPDATE_GOLDEN") == "1"


def _parse(text: str, name: str) -> ast.PolicyFile:
    outcome = parse_source(text, name)
    assert outcome.file is not None, outcome.diagnostics
    return outcome.file


def _format(text: str, name: str) -> str:
    outcome = format_source(text, name)
    assert outcome.text is not None, outcome.diagnostics
    return outcome.text


@pytest.fixture(params=INPUTS, ids=[p.stem for p in INPUTS])
def golden_input(request: pytest.FixtureRequest) -> Path:
    path: Path = request.param
    return path


def test_there_are_enough_goldens() -> None:
    assert len(INPUTS) >= 8


def test_matches_golden(golden_input: Path) -> None:
    expected_path = golden_input.with_name(golden_input.name + ".formatted")
    actual = _format(golden_input.read_text(encoding="utf-8"), golden_input.name)
    if UPDATE:
        expected_path.write_text(actual, encoding="utf-8")
    assert expected_path.exists(), f"run POLICYC_UPDATE_GOLDEN=1 to create {expected_path.name}"
    assert actual == expected_path.read_text(encoding="utf-8")


def test_formatting_is_idempotent(golden_input: Path) -> None:
    once = _format(golden_input.read_text(encoding="utf-8"), golden_input.name)
    assert _format(once, golden_input.name) == once


def test_ast_survives_formatting(golden_input: Path) -> None:
    source = golden_input.read_text(encoding="utf-8")
    before = _parse(source, "x")
    after = _parse(_format(source, "x"), "x")
    assert after == before
    # Equality says 1 == 1.0 == True; repr also checks each literal kept its type.
    assert repr(after.items) == repr(before.items)


def test_comments_kept_in_order(golden_input: Path) -> None:
    source = golden_input.read_text(encoding="utf-8")
    formatted = _format(source, "x")
    before = [c.text for c in _parse(source, "x").comments]
    assert [c.text for c in _parse(formatted, "x").comments] == before
    assert all(text in formatted for text in before)


def test_comment_golden_keeps_every_hash() -> None:
    """The comments golden has no ``#`` in strings, so each ``#`` is one comment."""
    source = (GOLDEN / "comments.policy").read_text(encoding="utf-8")
    formatted = _format(source, "comments.policy")
    assert len(_parse(source, "x").comments) == source.count("#") == formatted.count("#")


# ------------------------------------------------------------------ coverage


def _walk(value: Any) -> Iterator[Any]:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        yield value
        for f in dataclasses.fields(value):
            yield from _walk(getattr(value, f.name))
    elif isinstance(value, tuple | list):
        for item in value:
            yield from _walk(item)


@cache
def _all_nodes() -> tuple[Any, ...]:
    nodes: list[Any] = []
    for path in INPUTS:
        nodes.extend(_walk(_parse(path.read_text(encoding="utf-8"), path.name).items))
    return tuple(nodes)


def test_goldens_use_every_node_type() -> None:
    every = {
        obj
        for obj in vars(ast).values()
        if isinstance(obj, type)
        and dataclasses.is_dataclass(obj)
        and obj.__module__ == ast.__name__
    }
    every -= {ast.PolicyFile, ast.Comment}
    used = {type(node) for node in _all_nodes()}
    assert every - used == set()


@pytest.mark.parametrize(
    ("node_type", "attribute", "values"),
    [
        (ast.ModeSetting, "mode", {"active", "audit", "enforce"}),
        (ast.FailSetting, "open", {True, False}),
        (ast.Hook, "phases", {"request", "response", "both"}),
        (ast.CheckRule, "severity", {"deny", "warn", "info"}),
        (ast.CheckRule, "unless", {True, False}),
        (ast.ListRule, "effect", {"allow", "deny"}),
        (ast.ListRule, "subject", {"tools", "models"}),
        (ast.LimitRule, "kind", {"size", "length", "count"}),
        (ast.LimitRule, "unit", {None, "b", "kb", "mb"}),
        (ast.Compare, "op", {"==", "!=", "<", "<=", ">", ">="}),
        (ast.Compare, "quantifier", {None}),
        (ast.Matches, "quantifier", {"any", "all"}),
        (ast.In, "negated", {True, False}),
        (ast.Exists, "negated", {True, False}),
        (ast.Constant, "value", {True, False}),
        (ast.Call, "function", {"length", "size", "count", "lower", "upper"}),
        (ast.IsType, "type_name", {"string", "number", "int", "bool", "null", "object", "list"}),
        (ast.TypeRef, "base", {"int", "number", "string", "bool"}),
        (ast.TypeRef, "is_list", {True, False}),
        (ast.Guard, "unless", {True, False}),
        (ast.SideSetting, "side", {"sending", "receiving"}),
        (ast.ExpectDecision, "decision", {"allow", "deny"}),
        (ast.Given, "phase", {"request", "response"}),
    ],
)
def test_goldens_use_every_variant(node_type: type, attribute: str, values: set[Any]) -> None:
    seen = {getattr(n, attribute) for n in _all_nodes() if isinstance(n, node_type)}
    assert values <= seen

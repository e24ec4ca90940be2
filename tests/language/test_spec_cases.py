"""The language specified as data: ``cases/GROUP/NAME.policy`` + ``NAME.expect.json``.

Each case runs through ``check_sources({"NAME.policy": text}, until=STAGE)``
(with ``tools=`` the snapshot in ``NAME.tools.json`` when there is one)
and must produce exactly the diagnostics its expectation lists (code,
severity, span, message, help, notes). A case that also has an ``"ast"`` key
pins the parsed tree as a compact structural summary (see ``summarize``).

Expectation format (JSON)::

    {
      "stage": "parse" | "resolve" | "check" | "lint",     # default "lint"
      "diagnostics": [
        {"code": "E203", "severity": "error", "line": 3, "column": 11,
         "end_line": 3, "end_column": 24, "message": "...", "help": "..." | null}
      ],
      "ast": {"items": [...], "comments": [...]},           # optional
      "limits": {"max_nesting": 3}                         # optional SourceLimits
    }

The ``.policy`` file is fed as bytes, so a case can show a file that is not UTF-8.

To regenerate after an intended change, then review every changed file::

    POLICYC_UPDATE_CASES=1 pytest tests/language/test_spec_cases.py
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from lark import Tree

from policy_engine.language import ast
from policy_engine.language.check_tools import load_snapshot
from policy_engine.language.codes import CODES
from policy_engine.language.diagnostics import Diagnostic
from policy_engine.language.grammar import parser
from policy_engine.language.limits import SourceLimits
from policy_engine.language.parser import parse_source
from policy_engine.language.pipeline import STAGES, CheckResult, check_sources

CASES_DIR = Path(__file__).parent / "cases"
CASES = sorted(CASES_DIR.glob("*/*.policy"))
AST_CASES = [p for p in CASES if p.parent.name == "ast"]
UPDATE = os.environ.get("POLICYC_UPDATE_CASES") == "1"
EXPECT_KEYS = {"stage", "diagnostics", "ast", "limits"}
DIAGNOSTIC_KEYS = {"code", "severity", "line", "column", "end_line", "end_column", "message"}
DIAGNOSTIC_KEYS_OPTIONAL = {"help", "notes"}
SKIPPED_FIELDS = {"span", "name_span"}


# ------------------------------------------------------------------ summary


def summarize(node: Any) -> Any:
    """An AST node as plain JSON data, spans dropped.

    A node becomes ``{"Type": {field: value}}``, leaving out fields that hold
    their default; a node with a single field becomes ``{"Type": value}`` and
    one with no fields the string ``"Type"``. Tuples become lists.
    """
    if isinstance(node, ast.PolicyFile):
        return {
            "items": [summarize(item) for item in node.items],
            "comments": [comment.text for comment in node.comments],
        }
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        fields = [f for f in dataclasses.fields(node) if f.name not in SKIPPED_FIELDS]
        name = type(node).__name__
        if not fields:
            return name
        if len(fields) == 1:
            return {name: summarize(getattr(node, fields[0].name))}
        shown: dict[str, Any] = {}
        for f in fields:
            value = getattr(node, f.name)
            if f.default is not dataclasses.MISSING and _same(value, f.default):
                continue
            shown[f.name] = summarize(value)
        return {name: shown}
    if isinstance(node, tuple | list):
        return [summarize(item) for item in node]
    if isinstance(node, dict):
        return {key: summarize(value) for key, value in node.items()}
    return node


def _same(value: Any, default: Any) -> bool:
    """Equal and of the same type: ``False`` is not the default ``0``, nor ``1.0`` ``1``."""
    return type(value) is type(default) and value == default


def canonical(data: Any) -> str:
    """JSON text that tells ``1`` from ``1.0`` and ``true``, so literal types are compared."""
    return json.dumps(data, sort_keys=True, ensure_ascii=False)


# ------------------------------------------------------------- diagnostics


def diagnostic_record(d: Diagnostic) -> dict[str, Any]:
    record: dict[str, Any] = {
        "code": d.code,
        "severity": str(d.severity),
        "line": d.span.line,
        "column": d.span.column,
        "end_line": d.span.end_line,
        "end_column": d.span.end_column,
        "message": d.message,
        "help": d.help,
    }
    if d.notes:
        record["notes"] = list(d.notes)
    return record


def _order(record: dict[str, Any]) -> tuple[Any, ...]:
    """Location first, as the checker sorts; the rest breaks ties deterministically."""
    return (
        record["line"],
        record["column"],
        record["code"],
        record["end_line"],
        record["end_column"],
        record["message"],
        record.get("help") or "",
    )


# -------------------------------------------------------------------- cases


def case_id(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


def expect_path(path: Path) -> Path:
    return path.with_name(path.stem + ".expect.json")


def load_expectation(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(expect_path(path).read_text(encoding="utf-8"))
    return data


def run_case(
    path: Path, stage: str, with_ast: bool, limits: dict[str, int] | None = None
) -> tuple[dict[str, Any], CheckResult]:
    source_limits = SourceLimits(**(limits or {}))
    snapshot = path.with_name(path.name.removesuffix(".policy") + ".tools.json")
    tools = load_snapshot(snapshot.read_text(encoding="utf-8")) if snapshot.exists() else None
    result = check_sources(
        {path.name: path.read_bytes()},
        until=stage,  # type: ignore[arg-type]
        limits=source_limits,
        tools=tools,
    )
    text = path.read_text(encoding="utf-8", errors="replace")
    actual: dict[str, Any] = {
        "stage": stage,
        "diagnostics": sorted((diagnostic_record(d) for d in result.diagnostics), key=_order),
    }
    if with_ast:
        tree: ast.PolicyFile | None
        if result.model is not None:
            tree = result.model.files[0] if result.model.files else None
        else:
            tree = parse_source(text, path.name, source_limits).file
        actual["ast"] = None if tree is None else summarize(tree)
    return actual, result


def dump(value: Any, indent: int = 0, used: int = 0, width: int = 100) -> str:
    """JSON that keeps a value on one line when it fits, so expectations stay readable.

    ``used`` is how much of the line a key already takes.
    """
    flat = json.dumps(value, ensure_ascii=False)
    if indent + used + len(flat) <= width or not isinstance(value, dict | list) or not value:
        return flat
    pad = " " * (indent + 2)
    if isinstance(value, list):
        inner = [pad + dump(item, indent + 2, 0, width) for item in value]
        return "[\n" + ",\n".join(inner) + "\n" + " " * indent + "]"
    members = []
    for key, item in value.items():
        label = json.dumps(key, ensure_ascii=False) + ": "
        members.append(pad + label + dump(item, indent + 2, len(label), width))
    return "{\n" + ",\n".join(members) + "\n" + " " * indent + "}"


def write_expectation(path: Path, data: dict[str, Any]) -> None:
    lines = ["{", f'  "stage": {json.dumps(data["stage"])},']
    if "limits" in data:
        lines.append(f'  "limits": {json.dumps(data["limits"])},')
    records = data["diagnostics"]
    if records:
        lines.append('  "diagnostics": [')
        body = [
            "    " + json.dumps(r, ensure_ascii=False, separators=(", ", ": ")) for r in records
        ]
        lines.append(",\n".join(body))
        lines.append("  ]" + ("," if "ast" in data else ""))
    else:
        lines.append('  "diagnostics": []' + ("," if "ast" in data else ""))
    if "ast" in data:
        lines.append(f'  "ast": {dump(data["ast"], 2)}')
    lines.append("}")
    expect_path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize("path", CASES, ids=[case_id(p) for p in CASES])
def test_case(path: Path) -> None:
    existing = load_expectation(path) if expect_path(path).exists() else {}
    stage = existing.get("stage", "lint")
    with_ast = "ast" in existing or path.parent.name == "ast"
    actual, result = run_case(path, stage, with_ast, existing.get("limits"))
    if UPDATE:
        write_expectation(
            path, {**actual, **({"limits": existing["limits"]} if "limits" in existing else {})}
        )
        existing = load_expectation(path)
    assert existing, f"no {expect_path(path).name}; run with POLICYC_UPDATE_CASES=1 and review it"
    # The checker reports in location order; records are compared in a total
    # order because diagnostics at the same place and code may come in any order.
    keys = [d.sort_key() for d in result.diagnostics]
    assert keys == sorted(keys)
    expected_records = sorted(existing["diagnostics"], key=_order)
    assert actual["diagnostics"] == expected_records
    if "ast" in existing:
        assert canonical(actual["ast"]) == canonical(existing["ast"])


# --------------------------------------------------------------- meta-tests


@cache
def all_expectations() -> dict[str, dict[str, Any]]:
    return {case_id(p): load_expectation(p) for p in CASES if expect_path(p).exists()}


def test_every_case_has_a_well_formed_expectation() -> None:
    assert CASES, "no cases found"
    orphans = [
        e.name
        for e in CASES_DIR.glob("*/*.expect.json")
        if not e.with_name(e.name.removesuffix(".expect.json") + ".policy").exists()
    ]
    assert orphans == []
    for path in CASES:
        data = load_expectation(path)
        assert set(data) <= EXPECT_KEYS, case_id(path)
        assert data.get("stage", "lint") in STAGES, case_id(path)
        assert isinstance(data["diagnostics"], list), case_id(path)
        for record in data["diagnostics"]:
            assert DIAGNOSTIC_KEYS <= set(record) <= DIAGNOSTIC_KEYS | DIAGNOSTIC_KEYS_OPTIONAL
            assert record["code"] in CODES, (case_id(path), record["code"])
            expected_severity = "error" if record["code"].startswith("E") else "warning"
            assert record["severity"] == expected_severity, (case_id(path), record)


def test_every_code_has_a_case() -> None:
    covered = {r["code"] for data in all_expectations().values() for r in data["diagnostics"]}
    assert sorted(set(CODES) - covered) == []


def test_diagnostic_cases_focus_on_their_group() -> None:
    """A case in ``syntax/`` shows a syntax code, ``names/`` an E1xx, and so on.

    A case with no diagnostics at all is a negative case: the look-alike that is fine.
    """
    prefixes = {
        "syntax": ("E0",),
        "names": ("E1", "W1"),
        "values": ("E2",),
        "lints": ("W3",),
        "tests": ("E213", "E1", "W1"),
    }
    for path in CASES:
        group = path.parent.name
        if group not in prefixes:
            continue
        codes = [r["code"] for r in load_expectation(path)["diagnostics"]]
        assert not codes or any(c.startswith(prefixes[group]) for c in codes), case_id(path)


def test_there_are_enough_ast_cases() -> None:
    assert len(AST_CASES) >= 25
    for path in AST_CASES:
        data = load_expectation(path)
        assert data.get("ast") is not None, f"{case_id(path)} does not parse"
        errors = [r for r in data["diagnostics"] if r["severity"] == "error"]
        assert errors == [], case_id(path)


def _walk(value: Any) -> Iterator[Any]:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        yield value
        for f in dataclasses.fields(value):
            if f.name not in SKIPPED_FIELDS:
                yield from _walk(getattr(value, f.name))
    elif isinstance(value, tuple | list):
        for item in value:
            yield from _walk(item)


@cache
def ast_case_nodes() -> tuple[Any, ...]:
    nodes: list[Any] = []
    for path in AST_CASES:
        outcome = parse_source(path.read_text(encoding="utf-8"), path.name)
        assert outcome.file is not None, case_id(path)
        nodes.extend(_walk(outcome.file))
        nodes.extend(outcome.file.comments)
    return tuple(nodes)


def test_ast_cases_use_every_node_type() -> None:
    every = {
        obj
        for obj in vars(ast).values()
        if isinstance(obj, type)
        and dataclasses.is_dataclass(obj)
        and obj.__module__ == ast.__name__
    }
    used = {type(node) for node in ast_case_nodes()}
    assert sorted(t.__name__ for t in every - used) == []


def test_ast_cases_use_every_grammar_rule() -> None:
    """Every named rule and alias of the lark grammar shows up in some case's parse tree."""
    named: set[str] = set()
    for rule in parser().rules:
        name = rule.alias or rule.origin.name
        name = str(getattr(name, "name", name))
        if name.startswith("_") or (rule.options.expand1 and not rule.alias):
            continue
        named.add(name)
    assert len(named) > 50  # the filter above keeps the grammar's real rules
    seen: set[str] = set()
    for path in AST_CASES:
        tree = parser().parse(path.read_text(encoding="utf-8"))
        seen.update(str(sub.data) for sub in tree.iter_subtrees() if isinstance(sub, Tree))
    assert sorted(named - seen) == []


@pytest.mark.parametrize(
    ("node_type", "attribute", "values"),
    [
        (ast.Interceptor, "kind", {"validator", "mutator"}),
        (ast.ModeSetting, "mode", {"active", "audit", "enforce"}),
        (ast.FailSetting, "open", {True, False}),
        (ast.Hook, "phases", {"request", "response", "both"}),
        (ast.CheckRule, "severity", {"deny", "warn", "info"}),
        (ast.CheckRule, "unless", {True, False}),
        (ast.Guard, "unless", {True, False}),
        (ast.ListRule, "effect", {"allow", "deny"}),
        (ast.ListRule, "subject", {"tools", "models"}),
        (ast.LimitRule, "kind", {"size", "length", "count"}),
        (ast.LimitRule, "unit", {None, "b", "kb", "mb"}),
        (ast.Compare, "op", {"==", "!=", "<", "<=", ">", ">="}),
        (ast.Compare, "quantifier", {None, "any", "all"}),
        (ast.Matches, "quantifier", {None, "any", "all"}),
        (ast.Like, "quantifier", {None, "any", "all"}),
        (ast.In, "quantifier", {None, "any", "all"}),
        (ast.IsType, "quantifier", {None, "any", "all"}),
        (ast.In, "negated", {True, False}),
        (ast.Exists, "negated", {True, False}),
        (ast.Constant, "value", {True, False}),
        (ast.Call, "function", {"length", "size", "count", "lower", "upper"}),
        (ast.IsType, "type_name", {"string", "number", "int", "bool", "null", "object", "list"}),
        (ast.TypeRef, "base", {"int", "number", "string", "bool"}),
        (ast.TypeRef, "is_list", {True, False}),
        (ast.SideSetting, "side", {"sending", "receiving"}),
        (ast.ExpectDecision, "decision", {"allow", "deny"}),
        (ast.Given, "phase", {"request", "response"}),
    ],
)
def test_ast_cases_use_every_variant(node_type: type, attribute: str, values: set[Any]) -> None:
    seen = {getattr(n, attribute) for n in ast_case_nodes() if isinstance(n, node_type)}
    assert values <= seen


def test_ast_cases_use_every_literal_kind() -> None:
    kinds = {type(n.value).__name__ for n in ast_case_nodes() if isinstance(n, ast.Literal_)}
    assert {"str", "int", "float", "bool", "NoneType", "tuple"} <= kinds


def test_summarize_keeps_structure_and_drops_spans() -> None:
    """The summary is what the AST cases compare, so it must see every difference."""
    left = parse_source('validator v { on tools/call request deny if $.a == 1 "m" }', "a").file
    moved = parse_source(
        'validator v {\n\n  on tools/call request\n  deny if $.a == 1 "m"\n}', "b"
    ).file
    changed = parse_source('validator v { on tools/call request deny if $.a == 1.0 "m" }', "c").file
    assert left is not None and moved is not None and changed is not None
    assert canonical(summarize(left)) == canonical(summarize(moved))
    assert canonical(summarize(left)) != canonical(summarize(changed))
    rule = summarize(left)["items"][0]["Interceptor"]["statements"][1]
    assert rule == {
        "CheckRule": {
            "severity": "deny",
            "condition": {
                "Compare": {"op": "==", "left": {"PathRef": "$.a"}, "right": {"Literal_": 1}}
            },
            "message": "m",
        }
    }

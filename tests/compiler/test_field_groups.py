"""Grouped `$..name` rules give exactly what the rules give one by one."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from policy_engine.compiler import compile_sources
from policy_engine.compiler.field_groups import FieldGroup

from .reference_path import assert_same_as_one_by_one

# Names that nest (an `a` holding a `b`), repeat across rules (two rules on
# `a`), and meet replacements equal to the value (`redact ... with "x"`).
RULES = [
    'redact $..a with "x"',
    'redact $..b with "[B]"',
    "mask $..a keep 1",
    "hash $..c",
    "mask $..b",
    'redact $..c with "x"',
]
LEAF = st.one_of(st.sampled_from(["x", "ab", "1234"]), st.integers(0, 9), st.none())
NAMES = st.sampled_from(["a", "b", "c", "d"])
TREE = st.recursive(
    LEAF,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(NAMES, inner, max_size=3)),
    max_leaves=12,
)


def policy_of(rules: list[int]) -> Any:
    body = "\n".join(f"  {RULES[i]}" for i in rules)
    return compile_sources({"g.policy": f'mutator g "G" {{\n  on tools/call request\n{body}\n}}\n'})


@settings(max_examples=400, deadline=None)
@given(
    rules=st.lists(st.integers(0, len(RULES) - 1), min_size=2, max_size=5),
    args=st.dictionaries(NAMES, TREE, max_size=3),
)
def test_grouped_field_rules_equal_rules_one_by_one(rules: list[int], args: dict[str, Any]) -> None:
    policy = policy_of(rules)
    assert isinstance(policy.interceptors["g"].plan[0], FieldGroup)
    payload = {"name": "t", "arguments": args}
    assert_same_as_one_by_one(policy, payload)
    assert payload == {"name": "t", "arguments": args}  # the input is never changed


def test_a_guarded_rule_or_a_matching_rule_ends_the_group() -> None:
    policy = policy_of([0, 1])
    source = (
        'mutator g "G" {\n  on tools/call request\n  redact $..a with "x"\n'
        '  redact $..b with "y" if $.name == "t"\n  redact $..c matching EMAIL\n'
        '  redact $..d with "z"\n}\n'
    )
    plan = compile_sources({"g.policy": source}).interceptors["g"].plan
    assert not any(isinstance(step, FieldGroup) for step in plan)
    assert isinstance(policy.interceptors["g"].plan[0], FieldGroup)


# --------------------------------------------------------------- one walk, one patch


def _locations(value: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every location under ``value`` (not the root), pre-order."""
    out: list[tuple[Any, ...]] = []
    items = (
        enumerate(value)
        if isinstance(value, list)
        else value.items()
        if isinstance(value, dict)
        else ()
    )
    for key, item in items:
        out.append((*here, key))
        out += _locations(item, (*here, key))
    return out


def _prefix_free(locations: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    chosen: list[tuple[Any, ...]] = []
    for location in locations:
        if not any(location[: len(c)] == c or c[: len(location)] == location for c in chosen):
            chosen.append(location)
    return chosen


@settings(max_examples=300, deadline=None)
@given(tree=st.dictionaries(NAMES, TREE, max_size=3), data=st.data())
def test_patch_copies_the_way_to_each_change_as_the_trie_did(tree: Any, data: Any) -> None:
    """`patch` (one copy per container, found again by its location) gives what the
    trie gave, shares what it shared, and leaves the input alone, a container held
    at two places included."""
    import copy

    from policy_engine.compiler.jsonpath import _patch_trie, patch

    doc = {"one": tree, "two": [tree, {"again": tree}]}
    before = copy.deepcopy(doc)
    candidates = _locations(doc)
    picked = data.draw(st.lists(st.sampled_from(candidates), max_size=6)) if candidates else []
    changes = {location: f"new{n}" for n, location in enumerate(_prefix_free(picked))}
    patched = patch(doc, changes)
    if not changes:
        assert patched is doc
        return
    assert patched == _patch_trie(doc, changes)
    assert doc == before
    assert _shared_ids(patched, doc) == _shared_ids(_patch_trie(doc, changes), doc)


def _shared_ids(new: Any, old: Any) -> list[bool]:
    out = [new is old]
    if isinstance(new, dict) and isinstance(old, dict):
        for key in new:
            if isinstance(new[key], dict | list) and isinstance(old.get(key), dict | list):
                out += _shared_ids(new[key], old[key])
    elif isinstance(new, list) and isinstance(old, list):
        for a, b in zip(new, old, strict=False):
            if isinstance(a, dict | list) and isinstance(b, dict | list):
                out += _shared_ids(a, b)
    return out


def test_a_field_holding_an_object_and_fields_nested_under_replaced_ones() -> None:
    shared = {"email": "a@b.c", "ssn": "123"}
    payload = {
        "arguments": {
            "email": {"email": "inner@b.c", "ssn": "1"},
            "x": [shared, {"deep": shared}],
            "ssn": 7,
        }
    }
    source = {
        "p.policy": """
mutator g "fields" {
  on tools/call request
  redact $..email with "[EMAIL]"
  redact $..ssn with "[SSN]"
  mask $..card_number keep 4
  redact $.arguments matching EMAIL
}
"""
    }
    optimised = compile_sources(source)
    assert isinstance(optimised.interceptors["g"].plan[0], FieldGroup)
    assert_same_as_one_by_one(optimised, payload)
    reference = compile_sources(source, optimize=False)
    expected = reference.invoke_sync("g", "tools/call", "request", payload)
    result = optimised.invoke_sync("g", "tools/call", "request", payload)
    assert result.model_dump(exclude={"duration_ms"}) == expected.model_dump(
        exclude={"duration_ms"}
    )
    assert payload["arguments"]["x"][0] is shared and shared["email"] == "a@b.c"


def test_the_walk_of_names_raises_past_the_depth_limit_as_before() -> None:
    import pytest

    from policy_engine.compiler.jsonpath import PayloadTooDeep, descendant_fields

    deep: Any = {"email": "x"}
    for _ in range(70):
        deep = {"a": [deep]}
    with pytest.raises(PayloadTooDeep, match="depth 65 exceeds the limit of 64"):
        descendant_fields(deep, ("email",), 64)
    shallow: Any = {"email": "x"}
    for _ in range(20):
        shallow = {"a": [shallow], "email": len(str(shallow))}
    found = descendant_fields(shallow, ("email",), 64)["email"]
    assert [len(location) for _, location in found] == list(range(1, 42, 2))

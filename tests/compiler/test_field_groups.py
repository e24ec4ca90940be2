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

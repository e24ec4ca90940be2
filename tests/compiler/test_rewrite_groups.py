"""Grouped `matching` rules on one path give exactly what the rules give one by one."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from policy_engine.compiler import compile_sources
from policy_engine.compiler.rewrite_groups import RewriteGroup

from .reference_path import assert_same_as_one_by_one

# Replacements that create matches for later rules ("a" -> "b" then /b+/),
# destroy them, or sit in front of anchored patterns.
RULES = [
    'redact $.arguments matching /a+/ with "b"',
    'redact $.arguments matching /b+/ with "[B]"',
    "mask $.arguments matching /\\d{3,}/ keep 1",
    "hash $.arguments matching /x\\s+y/",
    'redact $.arguments matching /^b/ with "<start>"',
    "redact $.arguments matching EMAIL, SSN",
    'redact $.arguments matching /(?s)a.b/ with "~"',
]
TEXT = st.text(st.sampled_from(list("ab xy\n1234@.-")), max_size=14)
PAYLOAD = st.fixed_dictionaries(
    {"note": TEXT, "list": st.lists(TEXT, max_size=3), "n": st.integers(0, 9)}
)


def policy_of(rules: list[int]) -> Any:
    body = "\n".join(f"  {RULES[i]}" for i in rules)
    return compile_sources({"g.policy": f'mutator g "G" {{\n  on tools/call request\n{body}\n}}\n'})


@settings(max_examples=300, deadline=None)
@given(rules=st.lists(st.integers(0, len(RULES) - 1), min_size=2, max_size=6), args=PAYLOAD)
def test_grouped_rules_equal_rules_one_by_one(rules: list[int], args: dict[str, Any]) -> None:
    policy = policy_of(rules)
    assert any(isinstance(step, RewriteGroup) for step in policy.interceptors["g"].plan)
    payload = {"name": "t", "arguments": args}
    assert_same_as_one_by_one(policy, payload)


def test_a_thousand_rules_scan_once_and_still_fire() -> None:
    rules = "\n".join(
        f"  redact $.arguments.q matching /\\bcode[-_ ]?{i}\\b/ code c{i}" for i in range(1000)
    )
    policy = compile_sources(
        {"g.policy": f'mutator g "G" {{\n  on tools/call request\n{rules}\n}}\n'}
    )
    (group,) = policy.interceptors["g"].plan
    assert isinstance(group, RewriteGroup)
    result = policy.invoke_sync("g", "tools/call", "request", {"arguments": {"q": "see code-999"}})
    assert result.payload == {"arguments": {"q": "see [REDACTED:/\\bcode[-_ ]?999\\b/]"}}
    assert result.info == {"changes": {"c999": 1}, "patterns": {"/\\bcode[-_ ]?999\\b/": 1}}

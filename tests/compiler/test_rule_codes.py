"""An uncoded rule's code comes from what it says, so results, coverage and the
reviews that key on them keep naming it when lines are added above it."""

from __future__ import annotations

from typing import Any

from policy_engine.compiler.policy_set import compile_sources

RULE = '  deny if $.arguments.sql matches /drop/ "no drops"'
PAYLOAD = {"name": "q", "arguments": {"sql": "drop table t"}}


def fired(text: str) -> list[str]:
    result: Any = compile_sources({"crm.policy": text}).invoke_sync(
        "crm-no-exfil", "tools/call", "request", PAYLOAD
    )
    return [rule["rule"] for rule in result.info["rules"]]


def policy(*lines: str) -> str:
    return "\n".join(["validator crm-no-exfil {", "  on tools/call request", *lines, "}", ""])


def test_a_line_added_above_an_uncoded_rule_keeps_its_code() -> None:
    (before,) = fired(policy(RULE))
    (after,) = fired("# a comment\n\n" + policy('  warn if $.name == "x"', RULE))
    assert before == after
    prefix = "crm-no-exfil:check-"
    assert before.startswith(prefix) and len(before) == len(prefix) + 6


def test_identical_rules_get_codes_of_their_own_and_other_text_another() -> None:
    codes = fired(policy(RULE, RULE, RULE.replace("no drops", "no drops!")))
    assert len(set(codes)) == 3
    assert codes[1] == codes[0] + "-2"

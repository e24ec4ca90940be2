"""`matches` rules on one field share one scan per invoke (compiler/match_groups.py)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from policy_engine.compiler import compile_sources, match_groups
from policy_engine.compiler.match_groups import MAX_SET_SIZE, MatchGroup

WORDS = ["alpha", "beta", "gamma", "delta", "4111 1111 1111 1111", "4111 1111 1111 1112"]


def _validator(patterns: list[str], quantifier: str = "any") -> str:
    rules = "\n".join(
        f'  warn if {quantifier} $.texts[*] matches {p} "hit {i}" code r{i}'
        for i, p in enumerate(patterns)
    )
    return f"validator v {{\n  on app/run request\n{rules}\n  deny if false\n}}\n"


def _messages(policy: str, payload: Any) -> list[tuple[str | None, str]]:
    result = compile_sources({"v.policy": policy}).invoke_sync("v", "app/run", "request", payload)
    return [(m.path, m.message) for m in result.messages or []]


PATTERNS = ["/alpha/", "/(?i)BETA/", "/gam+a/", "/del.a/", "CREDIT_CARD", "/4111/", "EMAIL"]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(PATTERNS), min_size=2, max_size=7, unique=True),
    st.lists(st.lists(st.sampled_from(WORDS), max_size=3).map(" ".join), max_size=4),
    st.sampled_from(["any", "all"]),
)
def test_grouped_rules_answer_as_each_rule_alone(
    patterns: list[str], texts: list[str], quantifier: str
) -> None:
    payload = {"texts": texts}
    together = _messages(_validator(patterns, quantifier), payload)
    alone = []
    for i, pattern in enumerate(patterns):
        single = _validator([pattern], quantifier).replace("hit 0", f"hit {i}")
        alone += _messages(single, payload)
    assert together == alone


def test_fifty_rules_scan_only_the_strings_that_may_match(monkeypatch: Any) -> None:
    """One joined scan rules "nothing" out; only the other string is scanned alone."""
    calls: list[str] = []
    original = MatchGroup.hits

    def counting(self: MatchGroup, text: str) -> frozenset[int]:
        calls.append(text)
        return original(self, text)

    monkeypatch.setattr(MatchGroup, "hits", counting)
    patterns = [f"/word{i}\\b/" for i in range(50)]
    policy_set = compile_sources({"v.policy": _validator(patterns)})
    result = policy_set.invoke_sync(
        "v", "app/run", "request", {"texts": ["word7 and word42", "nothing"]}
    )
    assert [m.message for m in result.messages or []] == ["hit 7", "hit 42"]
    assert calls == ["word7 and word42"]


def test_a_guard_after_a_mutation_sees_the_new_payload() -> None:
    policy = (
        "mutator m {\n  on app/run request\n"
        '  set $.t = "beta" if $.t matches /alpha/\n'
        "  set $.seen = true if $.t matches /beta/\n"
        "}\n"
    )
    result = compile_sources({"m.policy": policy}).invoke_sync(
        "m", "app/run", "request", {"t": "alpha"}
    )
    assert result.payload == {"t": "beta", "seen": True}


def test_sets_are_split_past_their_size_limit() -> None:
    patterns = [f"/token{i}x/" for i in range(MAX_SET_SIZE + 10)]
    policy_set = compile_sources({"v.policy": _validator(patterns)})
    last = MAX_SET_SIZE + 9
    result = policy_set.invoke_sync("v", "app/run", "request", {"texts": [f"a token{last}x b"]})
    assert [m.message for m in result.messages or []] == [f"hit {last}"]


def test_checked_patterns_are_confirmed_inside_a_group() -> None:
    policy = _validator(["CREDIT_CARD", "/4111/"])
    messages = _messages(policy, {"texts": ["4111 1111 1111 1112"]})
    assert messages == [("texts[0]", "hit 1")]
    assert _messages(policy, {"texts": ["4111 1111 1111 1111"]}) == [
        ("texts[0]", "hit 0"),
        ("texts[0]", "hit 1"),
    ]


def test_a_set_that_reports_nothing_falls_back_to_each_pattern(monkeypatch: Any) -> None:
    class Silent:
        def Match(self, text: str) -> None:
            return None

    original_init = MatchGroup.__init__

    def silent_sets(self: MatchGroup, *args: Any) -> None:
        original_init(self, *args)
        self._sets = [(0, Silent())]

    monkeypatch.setattr(MatchGroup, "__init__", silent_sets)
    silenced = compile_sources({"v.policy": _validator(["/alpha/", "/beta/"])})
    result = silenced.invoke_sync("v", "app/run", "request", {"texts": ["beta"]})
    assert [m.message for m in result.messages or []] == ["hit 1"]
    assert frozenset() == match_groups.NO_HITS

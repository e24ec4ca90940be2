"""RE2 matchers: glob escaping, one alternation for many patterns, candidate checks."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from policy_engine.compiler.matchers import (
    GlobMatcher,
    PatternSpec,
    TextMatcher,
    glob_regex,
    matchable,
)
from policy_engine.compiler.mutators import substitute

# --------------------------------------------------------------------- globs


def reference_glob(glob: str, text: str) -> bool:
    """Python `re`, built independently: `*` any run, `?` one character, the rest literal."""
    body = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in glob)
    return re.fullmatch(body, text, re.DOTALL) is not None


@pytest.mark.parametrize("char", list(".+()[]{}|^$\\/-#&~ \t\n'\"é日"))
def test_every_non_wildcard_character_is_literal(char: str) -> None:
    matcher = GlobMatcher([f"a{char}b"])
    assert matcher.matches(f"a{char}b")
    assert not matcher.matches("axb") or char == "x"
    assert not matcher.matches("ab")


def test_glob_regex_escapes_punctuation_as_code_points() -> None:
    assert glob_regex("a.b") == "a\\x{2e}b"
    assert glob_regex("*?") == ".*."
    assert glob_regex("read_*") == "read_.*"


def test_globs_match_whole_strings_only() -> None:
    matcher = GlobMatcher(["read"])
    assert matcher.matches("read")
    assert not matcher.matches("reader")
    assert not matcher.matches("unread")
    assert not matcher.matches("read\n")


def test_question_mark_is_one_code_point_and_star_spans_lines() -> None:
    assert GlobMatcher(["caf?"]).matches("café")
    assert GlobMatcher(["?"]).matches("日")
    assert not GlobMatcher(["?"]).matches("")
    assert GlobMatcher(["a*z"]).matches("a\n\nz")
    assert GlobMatcher(["a?z"]).matches("a\nz")


def test_several_globs_are_alternatives() -> None:
    matcher = GlobMatcher(["search", "fetch_*", "?x"])
    assert [matcher.matches(t) for t in ("search", "fetch_url", "ax", "axx", "fetch")] == [
        True,
        True,
        True,
        False,
        False,
    ]


def test_no_globs_match_nothing() -> None:
    assert not GlobMatcher([]).matches("")
    assert not GlobMatcher([]).matches("anything")


GLOB_CHARS = st.sampled_from(list("ab.*?[]()+\\^$|{}\n é"))


@given(
    st.lists(GLOB_CHARS, max_size=8).map("".join), st.lists(GLOB_CHARS, max_size=10).map("".join)
)
def test_globs_agree_with_a_reference_implementation(glob: str, text: str) -> None:
    assert GlobMatcher([glob]).matches(text) == reference_glob(glob, text)


@given(
    st.lists(st.lists(GLOB_CHARS, max_size=6).map("".join), max_size=4),
    st.lists(GLOB_CHARS, max_size=10).map("".join),
)
def test_a_list_of_globs_matches_when_any_one_does(globs: list[str], text: str) -> None:
    """Lists of end-starred globs take the `str` methods, others RE2: both agree."""
    assert GlobMatcher(globs).matches(text) == any(reference_glob(g, text) for g in globs)


@pytest.mark.parametrize(
    ("globs", "text", "expected"),
    [
        (["claude-*", "gpt-4o*"], "claude-3", True),
        (["claude-*", "gpt-4o*"], "gpt-4", False),
        (["*_unsafe"], "rm_unsafe", True),
        (["*_unsafe"], "rm_unsafe_not", False),
        (["*admin*"], "superadmin-tool", True),
        (["*"], "", True),
        ([""], "", True),
        ([""], "x", False),
        (["**a"], "bba", True),
        (["read"], "read\n", False),
        (["caf\ufffd*"], "caf\ud800x", True),
        (["claude-*"], "my-claude-", False),
        (["*_unsafe"], "_unsafe_tool", False),
        (["*admin*", "read"], "reader", False),
        (["read", "*admin*"], "admin", True),
    ],
)
def test_end_starred_globs(globs: list[str], text: str, expected: bool) -> None:
    assert GlobMatcher(globs).matches(text) is expected


@given(st.text(max_size=20).filter(lambda t: "*" not in t and "?" not in t))
def test_a_glob_without_wildcards_matches_exactly_itself(text: str) -> None:
    matcher = GlobMatcher([text])
    assert matcher.matches(text)
    assert not matcher.matches(text + "x")


# -------------------------------------------------------- several patterns


def test_one_alternation_labels_each_hit_by_its_pattern() -> None:
    matcher = TextMatcher(
        [
            PatternSpec("DIGITS", r"[0-9]+", None),
            PatternSpec("WORD", r"[a-z]+", None),
            PatternSpec("GROUPS", r"(x)(y)?", None),
        ]
    )
    hits = [(h.start, h.end, h.label) for h in matcher.hits("12 ab XY 7")]
    assert hits == [(0, 2, "DIGITS"), (3, 5, "WORD"), (9, 10, "DIGITS")]
    # Capturing groups inside a pattern do not confuse the label (lastgroup
    # is the pattern's own group, which closes last).
    assert [h.label for h in matcher.hits("x1")] == ["WORD", "DIGITS"]
    only_groups = TextMatcher([PatternSpec("A", "a", None), PatternSpec("G", r"(x)(y)", None)])
    assert [(h.label, h.start) for h in only_groups.hits("xy a xy")] == [
        ("G", 0),
        ("A", 3),
        ("G", 5),
    ]


def test_leftmost_first_between_patterns() -> None:
    matcher = TextMatcher([PatternSpec("SHORT", "ab", None), PatternSpec("LONG", "abc", None)])
    assert [(h.label, h.end) for h in matcher.hits("abc")] == [("SHORT", 2)]


def test_empty_matches_are_never_hits() -> None:
    matcher = TextMatcher([PatternSpec("MAYBE", "x*", None)])
    assert [(h.start, h.end) for h in matcher.hits("axxb")] == [(1, 3)]
    assert list(matcher.hits("ab")) == []


def test_search_without_checks_is_a_plain_search() -> None:
    matcher = TextMatcher([PatternSpec("A", "needle", None)])
    assert matcher.search("haystack with a needle")
    assert not matcher.search("haystack")


# ---------------------------------------------------------- candidate checks


class CountingCheck:
    """A check that records what it was asked about."""

    def __init__(self, verdict: bool) -> None:
        self.verdict = verdict
        self.seen: list[str] = []

    def __call__(self, candidate: str) -> bool:
        self.seen.append(candidate)
        return self.verdict


def test_checks_run_once_per_candidate_of_their_own_pattern_only() -> None:
    check = CountingCheck(True)
    matcher = TextMatcher(
        [PatternSpec("NUM", "[0-9]+", check), PatternSpec("WORD", "[a-z]+", None)]
    )
    labels = [h.label for h in matcher.hits("12 ab 345 cd")]
    assert labels == ["NUM", "WORD", "NUM", "WORD"]
    assert check.seen == ["12", "345"]


def test_a_failed_check_drops_the_candidate() -> None:
    rejecting = CountingCheck(False)
    matcher = TextMatcher(
        [PatternSpec("NUM", "[0-9]+", rejecting), PatternSpec("W", "[a-z]+", None)]
    )
    assert [h.label for h in matcher.hits("12 ab 34")] == ["W"]
    assert rejecting.seen == ["12", "34"]
    assert not TextMatcher([PatternSpec("NUM", "[0-9]+", rejecting)]).search("123")


def test_search_stops_at_the_first_candidate_that_passes() -> None:
    check = CountingCheck(True)
    matcher = TextMatcher([PatternSpec("NUM", "[0-9]+", check)])
    assert matcher.search("1 2 3")
    assert check.seen == ["1"]


def test_no_check_runs_on_text_without_candidates() -> None:
    check = CountingCheck(True)
    matcher = TextMatcher([PatternSpec("NUM", "[0-9]+", check), PatternSpec("W", "[a-z]+", None)])
    assert matcher.search("only words here")
    assert list(matcher.hits("no digits")) != []
    assert check.seen == []


def test_luhn_check_of_the_builtin_card_pattern() -> None:
    from policy_engine.compiler.conditions import CompileEnv
    from policy_engine.compiler.matchers import pattern_specs
    from policy_engine.language import ast
    from policy_engine.language.resolve import resolve

    model, _ = resolve([])
    env = CompileEnv(model.patterns, {})
    matcher = TextMatcher(pattern_specs([ast.PatternName("CREDIT_CARD")], env.patterns))
    assert [h.label for h in matcher.hits("pay 4111 1111 1111 1111 now")] == ["CREDIT_CARD"]
    assert list(matcher.hits("pay 4111 1111 1111 1112 now")) == []


def test_a_failed_check_does_not_hide_another_pattern_at_the_same_place() -> None:
    rejecting = CountingCheck(False)
    matcher = TextMatcher(
        [PatternSpec("CARD", "[0-9 ]{6,}", rejecting), PatternSpec("HEAD", "12", None)]
    )
    assert [(h.label, h.start, h.end) for h in matcher.hits("12 34 56 x")] == [("HEAD", 0, 2)]
    assert rejecting.seen == ["12 34 56 "]
    assert matcher.search("12 34 56")


def test_a_user_group_named_like_the_generated_ones_keeps_labels_right() -> None:
    matcher = TextMatcher(
        [PatternSpec("USER", "(?P<_policyc1>a)", None), PatternSpec("B", "b", None)]
    )
    assert [h.label for h in matcher.hits("ab ba")] == ["USER", "B", "B", "USER"]


# ---------------------------------------------------------- lone surrogates


def test_matchable_keeps_offsets_and_valid_text() -> None:
    assert matchable("plain") == "plain"
    assert matchable("café") == "café"
    assert matchable("a\ud800b\udfff") == "a\ufffdb\ufffd"
    assert len(matchable("x\udc00" * 3)) == 6


def test_lone_surrogates_neither_crash_nor_shift_hits() -> None:
    matcher = TextMatcher([PatternSpec("N", "[0-9]+", None)])
    assert [(h.start, h.end) for h in matcher.hits("\ud800 42")] == [(2, 4)]
    checked = TextMatcher([PatternSpec("N", "[0-9]+", CountingCheck(True))])
    assert [(h.start, h.end) for h in checked.hits("\ud800 42")] == [(2, 4)]
    assert GlobMatcher(["a?b"]).matches("a\ud800b")


# ---------------------------------------------------------- the value group


def _spans(matcher: TextMatcher, text: str) -> list[tuple[str, str]]:
    return [(h.label, text[h.start : h.end]) for h in matcher.hits(text)]


def test_a_value_group_is_the_hit_and_never_hides_another_pattern() -> None:
    matcher = TextMatcher(
        [
            PatternSpec("PLAIN", r"[0-9]+", None),
            PatternSpec("GROUPS", r"(a)(b)?", None),
            PatternSpec("KEY", r"(key)\s*=\s*(?P<value>[a-z0-9]+)", None),
            PatternSpec("EM", r"(?:\b|_)(?P<value>x+)(?:\b|_)", None),
        ]
    )
    text = "7 key = secret ab _xx_ 9 key=zz9"
    assert _spans(matcher, text) == [
        ("PLAIN", "7"),
        ("KEY", "secret"),
        ("GROUPS", "ab"),
        ("EM", "xx"),
        ("PLAIN", "9"),
        ("KEY", "zz9"),
    ]
    assert matcher.search("key=abc")


def test_a_check_sees_only_the_value() -> None:
    seen = CountingCheck(True)
    matcher = TextMatcher([PatternSpec("KEY", r"token: (?P<value>[a-z]+)", seen)])
    assert _spans(matcher, "token: abc.") == [("KEY", "abc")]
    assert seen.seen == ["abc"]
    rejecting = TextMatcher([PatternSpec("KEY", r"token: (?P<value>[a-z]+)", CountingCheck(False))])
    assert list(rejecting.hits("token: abc")) == []
    assert not rejecting.search("token: abc")


def test_a_branch_without_the_value_group_skips_its_text() -> None:
    """RE2 has no lookbehind; a consuming branch without the group stands in for one."""
    matcher = TextMatcher(
        [PatternSpec("IP", r"version [0-9.]+|(?P<value>[0-9]+(?:\.[0-9]+){3})", None)]
    )
    assert _spans(matcher, "version 1.2.3.4 at 10.0.0.1") == [("IP", "10.0.0.1")]
    assert not matcher.search("version 1.2.3.4")


def test_an_empty_value_is_no_hit() -> None:
    matcher = TextMatcher([PatternSpec("K", r"k=(?P<value>[0-9]*)", None)])
    assert _spans(matcher, "k= k=5") == [("K", "5")]


def test_redaction_keeps_the_label() -> None:
    matcher = TextMatcher([PatternSpec("K", r"api_key=(?P<value>\w+)", None)])
    counts: dict[str, int] = {}
    out = substitute("api_key=abc123, x", matcher, lambda m, label: f"[{label}]", counts)
    assert out == "api_key=[K], x"
    assert counts == {"K": 1}

"""One scan over many strings finds exactly the hits of one scan per string."""

from __future__ import annotations

import pytest
import re2
from hypothesis import given, settings
from hypothesis import strategies as st

from policy_engine.compiler.candidate_checks import CANDIDATE_CHECKS, luhn_valid
from policy_engine.compiler.matchers import (
    Hit,
    PatternSpec,
    TextMatcher,
    _bounds,
    _group_indexes,
    context_free,
    matchable,
)
from policy_engine.language.builtin_patterns import BUILTIN_PATTERNS

# Patterns chosen to stress the join: some cross a newline (`\s`, `(?s).`,
# negated classes), some depend on word boundaries or empty matches, some
# are anchored (never batched), one carries a candidate check.
REGEXES = [
    r"\bab+\b",
    r"a\s+b",
    r"(?s)a.b",
    r"[^x]{2}",
    r"b*",
    r"\d{4}",
    r"(?m)^a",
    r"^a",
    r"\Aa",
    r"(?:^|[^a])b",
    r"x(?:$|[^y])",
    r"b$",
    r"\Bb",
    r"é+",
    r"(a)(b)?",
]
ALPHABET = st.sampled_from(list("ab x\n\té1234\ud800"))
TEXTS = st.lists(st.text(ALPHABET, max_size=12), min_size=1, max_size=6)


def matcher_of(indexes: list[int], checked: bool) -> TextMatcher:
    specs = [PatternSpec(f"p{i}", REGEXES[i], None) for i in indexes]
    if checked:
        specs.append(PatternSpec("card", r"\d{2,6}", luhn_valid))
    return TextMatcher(specs)


@settings(max_examples=400, deadline=None)
@given(
    indexes=st.lists(st.integers(0, len(REGEXES) - 1), min_size=1, max_size=4, unique=True),
    checked=st.booleans(),
    texts=TEXTS,
)
def test_batched_hits_equal_per_string_hits(
    indexes: list[int], checked: bool, texts: list[str]
) -> None:
    matcher = matcher_of(indexes, checked)
    assert matcher.hits_many(texts) == [list(matcher.hits(t)) for t in texts]


@settings(max_examples=400, deadline=None)
@given(
    indexes=st.lists(st.integers(0, len(REGEXES) - 1), min_size=1, max_size=4, unique=True),
    checked=st.booleans(),
    texts=TEXTS,
)
def test_the_joined_prefilter_never_drops_a_matching_string(
    indexes: list[int], checked: bool, texts: list[str]
) -> None:
    """`matching` narrows by one joined scan, yet names exactly the strings `search` finds."""
    matcher = matcher_of(indexes, checked)
    assert matcher.matching(texts) == [k for k, t in enumerate(texts) if matcher.search(t)]


def shipped_matcher() -> TextMatcher:
    """Every built-in pattern, with its candidate check."""
    return TextMatcher(
        [
            PatternSpec(name, p.source, CANDIDATE_CHECKS[p.check] if p.check else None)
            for name, p in BUILTIN_PATTERNS.items()
        ]
    )


def forbid_scans_alone(matcher: TextMatcher, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make a scan of one string on its own fail the test."""

    def per_string(text: str) -> None:
        raise AssertionError("fell back to one scan per string")

    monkeypatch.setattr(matcher, "hits", per_string)


def test_the_shipped_patterns_batch_and_agree_on_mixed_text() -> None:
    matcher = shipped_matcher()
    texts = [
        "mail bob@example.com or call +14155550100",
        "card 4111 1111 1111 1111, IBAN GB82 WEST 1234 5698 7654 32",
        "key AKIAIOSFODNN7EXAMPLE and 4111111111111112 (not Luhn)",
        "café ünïcode bob@example.com end",
        "-----BEGIN RSA PRIVATE KEY-----",
        "MIIEow\n-----END RSA PRIVATE KEY-----",
    ]
    batched = matcher.hits_many(texts)
    assert batched == [list(matcher.hits(t)) for t in texts]
    assert sum(map(len, batched)) >= 6


def test_strings_no_match_crosses_are_scanned_once(monkeypatch: pytest.MonkeyPatch) -> None:
    matcher = shipped_matcher()
    texts = ["mail bob@example.com now", "café 4111 1111 1111 1111 ünï", "SSN 123-45-6789 ok", "x"]
    expected = [list(matcher.hits(t)) for t in texts]
    forbid_scans_alone(matcher, monkeypatch)
    assert matcher.hits_many(texts) == expected
    assert [h.label for h in expected[1]] == ["CREDIT_CARD"]
    assert texts[1][expected[1][0].start : expected[1][0].end] == "4111 1111 1111 1111"


def test_strings_that_are_a_value_whole_are_scanned_in_the_batch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A pattern's context (`(?:^|[^A-Za-z0-9])`, a trailing `[^-]`) can take in the
    separator, so matches start on it or run out of a string: the scan goes on
    confined to the string, and no string is scanned again on its own."""
    matcher = shipped_matcher()
    texts = [
        "bob@example.com",
        "123-45-6789",
        "4111 1111 1111 1111",
        "SSN 123-45-6789",
        "+14155550100",
        "GB82 WEST 1234 5698 7654 32",
        "10.0.0.1",
        "x",
    ]
    expected = [list(matcher.hits(t)) for t in texts]
    forbid_scans_alone(matcher, monkeypatch)
    assert matcher.hits_many(texts) == expected
    assert all(expected[:7]) and not expected[7]
    assert [(h.start, h.end) for h in expected[0]] == [(0, len(texts[0]))]


@settings(max_examples=300, deadline=None)
@given(
    indexes=st.lists(st.integers(0, len(REGEXES) - 1), min_size=1, max_size=3, unique=True),
    texts=st.lists(st.text(st.sampled_from(list("ab x\t-1")), max_size=6), min_size=2, max_size=8),
)
def test_short_strings_packed_with_separators_hit_as_alone(
    indexes: list[int], texts: list[str]
) -> None:
    """Many short strings: most matches touch a separator, and none may count."""
    matcher = matcher_of(indexes, checked=True)
    assert matcher.hits_many(texts) == [list(matcher.hits(t)) for t in texts]


@pytest.mark.parametrize(
    ("regex", "free"),
    [
        (r"\bword\b", True),
        (r"[^a]b", True),
        (r"[$^]", True),
        (r"[]^]x", True),
        (r"^a", True),
        (r"a$", True),
        (r"(?m)^a", True),
        (r"\^", True),
        (r"\Aa", False),
        (r"a\z", False),
        (r"(?-m)^a", False),
        (r"(?i-m:^a)", False),
    ],
)
def test_regexes_anchored_to_the_whole_text_are_not_batched(regex: str, free: bool) -> None:
    assert context_free(regex) is free


# --- against a reference that scans each string alone, on `str` ------------------------


def reference_hits(matcher: TextMatcher, text: str) -> list[Hit]:
    """The hits of one string from the wrapper's own `finditer` on `str`: no bytes, no
    joining, no segments, so a slip in the byte-level batch scan cannot hide in it."""
    text = matchable(text)
    found: list[tuple[int, int, int]] = []
    if matcher._joined is not None:
        for match in matcher._joined.finditer(text):
            if match.start() == match.end():
                continue
            groups = _group_indexes(matcher._joined, len(matcher._joined_index))
            k = next(k for k, g in enumerate(groups) if match.start(g) >= 0)
            found.append((match.start(), matcher._joined_index[k], match.end()))
    for index, regex in matcher._alone:
        found.extend(matcher._alone_hits(index, regex, text))
    hits = []
    last_end = 0
    for start, index, end in sorted(found):
        if start >= last_end:
            hits.append(Hit(start, end, matcher.specs[index].label))
            last_end = end
    return hits


# Value groups that may be empty or take no part, checks, overlaps between
# patterns, context that takes in a separator, and empty matches.
VALUED = [
    r"x(?P<value>a+)|b",
    r"(?:^|[^a])(?P<value>\d+)?-",
    r"(?P<value>é\d)\b",
    r"\d(?P<value>\d*)",
    r"a*",
    r"(?P<value>[ab]+)(?:\s|$)",
]


def valued_matcher(indexes: list[int], checked: bool) -> TextMatcher:
    specs = [PatternSpec(f"v{i}", VALUED[i], None) for i in indexes]
    if checked:
        specs.append(PatternSpec("card", r"(?P<value>\d{2,6})\b", luhn_valid))
    specs.append(PatternSpec("plain", r"ab|\d\d", None))
    return TextMatcher(specs)


@settings(max_examples=400, deadline=None)
@given(
    indexes=st.lists(st.integers(0, len(VALUED) - 1), min_size=1, max_size=4, unique=True),
    checked=st.booleans(),
    texts=st.lists(st.text(st.sampled_from(list("abx -\n\té1234\ud800")), max_size=10), max_size=8),
)
def test_batched_and_single_hits_equal_a_reference_scan_alone(
    indexes: list[int], checked: bool, texts: list[str]
) -> None:
    matcher = valued_matcher(indexes, checked)
    expected = [reference_hits(matcher, t) for t in texts]
    assert matcher.hits_many(texts) == expected
    assert [list(matcher.hits(t)) for t in texts] == expected


@settings(max_examples=100, deadline=None)
@given(
    texts=st.lists(
        st.text(st.sampled_from(list("0123456789 -+@.()#:é\nabGBDESN")), max_size=40),
        max_size=8,
    )
)
def test_shipped_patterns_equal_a_reference_scan_alone(texts: list[str]) -> None:
    matcher = shipped_matcher()
    assert matcher.hits_many(texts) == [reference_hits(matcher, t) for t in texts]


# --- ASCII-only data: Latin-1 programs find what the UTF-8 ones find --------------------

# Pieces of the shapes the built-in patterns look for, their labels and the
# boundaries around them, for texts that hit, nearly hit and overlap.
FRAGMENTS = [
    "jane.doe@example.com",
    "git@github.com:",
    "x_y@a-b.io",
    "@",
    ".",
    "-",
    "_",
    ":",
    "SSN",
    "ssn: ",
    "123-45-6789",
    "123456789",
    "tel ",
    "+1 415 555 0132",
    "(415) 555-0132",
    "020 7946 0958",
    "4111111111111111",
    "4111 1111 1111 1111",
    "GB82 WEST 1234 5698 7654 32",
    "10.0.0.1",
    "version 1.2.3.4",
    "fe80::1",
    "2001:db8::8a2e:370:7334",
    "AKIAIOSFODNN7EXAMPLE",
    "api_key=",
    "Bearer ",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "ghp_" + "a1B2" * 9,
    " ",
    "  ",
    "x",
    "Z9",
    "0",
    "7",
    "(",
    ")",
    "/",
    "=",
    '"',
    "\t",
    "|",
    ",",
]
ALL_BUILTINS = [
    PatternSpec(p.name, p.source, CANDIDATE_CHECKS[p.check] if p.check else None)
    for p in BUILTIN_PATTERNS.values()
]
ascii_texts = st.lists(st.sampled_from(FRAGMENTS), max_size=12).map("".join)


# One matcher for every example: it holds the programs each kind of scan builds.
BUILTINS_MATCHER = TextMatcher(ALL_BUILTINS)


def candidates(
    data: bytes, bounds: list[int], lines: bool, ascii_only: bool
) -> list[tuple[int, int, int, int]]:
    programs = BUILTINS_MATCHER._scan_programs(lines, ascii_only)
    return BUILTINS_MATCHER._candidates(programs, data, bounds)


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(ascii_texts, min_size=1, max_size=6), with_newlines=st.booleans())
def test_latin1_programs_find_what_utf8_programs_find_in_ascii(
    texts: list[str], with_newlines: bool
) -> None:
    matcher = BUILTINS_MATCHER
    assert matcher._scan_programs(True, True) is not matcher._scan_programs(True, False)
    if with_newlines:
        data = "\n".join(texts).encode("ascii")
        bounds = [0, len(data) + 1]
        assert candidates(data, bounds, False, True) == candidates(data, bounds, False, False)
        return
    batch = [t for t in texts if "\n" not in t]
    data = "\n".join(batch).encode("ascii")
    bounds = _bounds(map(len, batch))
    assert candidates(data, bounds, True, True) == candidates(data, bounds, True, False)


def test_a_pattern_latin1_cannot_say_scans_ascii_in_utf8() -> None:
    matcher = TextMatcher([PatternSpec("euro", r"(?P<value>\x{20AC}\d+|\d+EUR)\b", None)])
    assert matcher._scan_programs(True, True) is matcher._scan_programs(True, False)
    found = matcher.hits_many(["pay 12EUR", "or \u20ac5", "none"])
    assert found == [[Hit(4, 9, "euro")], [Hit(3, 5, "euro")], []]
    assert list(matcher.hits("pay 12EUR\nnow")) == [Hit(4, 9, "euro")]


def test_a_latin1_character_in_a_pattern_still_matches_only_itself() -> None:
    """`é` is one byte in a Latin-1 program: it must not match in ASCII text, and text
    holding it is scanned in UTF-8."""
    matcher = TextMatcher([PatternSpec("cafe", r"(?P<value>caf[é]|#\d!)", None)])
    assert matcher._scan_programs(True, True) is not matcher._scan_programs(True, False)
    found = matcher.hits_many(["cafe", "caf\u00e9", "ok #1!"])
    assert found == [[], [Hit(0, 4, "cafe")], [Hit(3, 6, "cafe")]]
    assert list(matcher.hits("cafe\n#2!")) == [Hit(5, 8, "cafe")]


def test_a_literal_latin1_cannot_encode_falls_back_at_scan_time() -> None:
    """`€` written as itself fails Latin-1's encoding, not RE2's parser: the scan of
    ASCII text still answers, from the UTF-8 programs."""
    matcher = TextMatcher([PatternSpec("euro", "(?P<value>€\\d+|\\d+EUR)\\b", None)])
    assert matcher.hits_many(["pay 12EUR", "or €5"]) == [[Hit(4, 9, "euro")], [Hit(3, 5, "euro")]]
    assert matcher._scan_programs(True, True) is matcher._scan_programs(True, False)


def test_a_pattern_re2_refuses_fails_when_the_matcher_is_built() -> None:
    """The UTF-8 programs are built with the matcher: a policy that cannot scan fails
    its load, never a request."""
    with pytest.raises(re2.error):
        TextMatcher([PatternSpec("huge", "(?P<value>a{1000}){1000}", None)])

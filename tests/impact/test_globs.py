"""The glob algebra against brute force: exact, or silent."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from policy_engine.compiler.matchers import GlobMatcher
from policy_engine.language.globs import glob_matches, glob_within, globs_intersect

ALPHABET = "ab"
GLOBS = st.text(alphabet="ab*?", max_size=5)
WORDS = [
    "".join(letters) for size in range(11) for letters in itertools.product(ALPHABET, repeat=size)
]


@given(GLOBS, st.text(alphabet="abc\n", max_size=8))
def test_matching_agrees_with_the_compiled_matcher(glob: str, text: str) -> None:
    assert glob_matches(glob, text) == GlobMatcher([glob]).matches(text)


@settings(max_examples=300)
@given(GLOBS, GLOBS)
def test_intersection_is_exact_on_short_words(a: str, b: str) -> None:
    common = any(glob_matches(a, w) and glob_matches(b, w) for w in WORDS)
    if common:
        assert globs_intersect(a, b)
    # globs of at most 5 symbols that share a word share one of at most 10 letters
    assert globs_intersect(a, b) == common


@settings(max_examples=300)
@given(GLOBS, GLOBS)
def test_containment_is_never_wrong(inner: str, outer: str) -> None:
    answer = glob_within(inner, outer)
    if answer is None:
        return
    truth = all(glob_matches(outer, w) for w in WORDS if glob_matches(inner, w))
    assert answer == truth

"""`normalize()` is NFKC with zero-width characters removed, whatever its fast paths."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from policy_engine.compiler.conditions import ZERO_WIDTH, normalize_text

ALPHABET = st.sampled_from(
    [*"ab Z1", *sorted(ZERO_WIDTH), "\uff41", "\u00e9", "e\u0301", "\ufb01", "\u2460", "\u212b"]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(ALPHABET, max_size=12).map("".join))
def test_normalize_is_nfkc_without_zero_width(text: str) -> None:
    folded = unicodedata.normalize("NFKC", text)
    assert normalize_text(text) == "".join(c for c in folded if c not in ZERO_WIDTH)


def test_ascii_comes_back_as_the_same_object() -> None:
    text = "plain ascii text"
    assert normalize_text(text) is text

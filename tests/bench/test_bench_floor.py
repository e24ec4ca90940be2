"""The floor bench's regexes without groups find exactly what the shipped patterns find
(the whole match), so its cheapest calls time the same scan (nothing here times anything)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import re2

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from _payloads import pii_text
from bench_floor import non_capturing

from policy_engine.compiler.matchers import line_mode
from policy_engine.language.builtin_patterns import BUILTIN_PATTERNS
from policy_engine.language.re2_config import re2_options

_TEXT = (
    pii_text(3, 4000)
    + "\nkey AKIAIOSFODNN7EXAMPLE and ghp_"
    + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
)


def _spans(regex: str, text: str) -> list[tuple[int, int]]:
    return [m.span() for m in re2.compile(regex, re2_options()).finditer(text)]


@pytest.mark.parametrize("name", sorted(BUILTIN_PATTERNS))
def test_every_pattern_without_groups_matches_where_it_did(name: str) -> None:
    source = line_mode(BUILTIN_PATTERNS[name].source)
    bare = non_capturing(source)
    assert re2.compile(bare, re2_options()).groups == 0
    assert _spans(bare, _TEXT) == _spans(source, _TEXT)


@pytest.mark.parametrize(
    ("regex", "expected"),
    [
        (r"(?P<value>a)(b)", "(?:a)(?:b)"),
        (r"\((x)\)", r"\((?:x)\)"),
        (r"[(](y)[)]", r"[(](?:y)[)]"),
        (r"[]()](z)", r"[]()](?:z)"),
        (r"[^]()](z)", r"[^]()](?:z)"),
        (r"(?i:a)(?:b)", "(?i:a)(?:b)"),
    ],
)
def test_groups_become_non_capturing_and_nothing_else_changes(regex: str, expected: str) -> None:
    assert non_capturing(regex) == expected

"""A quick fix corrects only what is wrong: it never drops the predicate of a filter (issue 33).

`[?(@.nme like "debug_*")]` was offered as `[?(@.name)]`, which passes check
and removes every tool instead of the debug ones.
"""

from __future__ import annotations

from policy_engine.authoring.fixes import suggestion
from policy_engine.language.pipeline import check_sources

POLICY = """\
mutator hide-debug {
  on tools/list response
  remove $.tools[?(@.nme like "debug_*")]
}
"""


def _fix(source: str) -> str | None:
    result = check_sources({"p.policy": source})
    (found,) = [d for d in result.diagnostics if d.code == "E203"]
    return suggestion(found)


def test_a_filter_typo_fix_keeps_the_predicate() -> None:
    fix = _fix(POLICY)
    assert fix == '$.tools[?(@.name like "debug_*")]'
    fixed = POLICY.replace('$.tools[?(@.nme like "debug_*")]', fix)
    assert check_sources({"p.policy": fixed}).error_count == 0


def test_a_fix_that_cannot_be_written_into_the_filter_is_not_offered() -> None:
    source = POLICY.replace("@.nme like", "@['nme'] like")
    fix = _fix(source)
    assert fix is None

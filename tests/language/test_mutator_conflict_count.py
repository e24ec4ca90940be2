"""W302 names each racing mutator once, so big policy sets stay readable."""

from __future__ import annotations

from policy_engine.language.pipeline import check_sources


def _mutator(name: str, priority: int = 0) -> str:
    return (
        f"mutator {name} {{\n  on tools/call request priority {priority}\n  redact $..email\n}}\n"
    )


def test_n_identical_mutators_give_n_minus_one_warnings() -> None:
    sources = {f"m{i}.policy": _mutator(f"m{i}") for i in range(12)}
    result = check_sources(sources)
    races = [d for d in result.diagnostics if d.code == "W302"]
    assert len(races) == 11
    assert {d.span.file for d in races} == {f"m{i}.policy" for i in range(1, 12)}
    assert all("`m0`" in d.message for d in races)


def test_distinct_priorities_do_not_race() -> None:
    sources = {f"m{i}.policy": _mutator(f"m{i}", priority=i) for i in range(5)}
    assert [d for d in check_sources(sources).diagnostics if d.code == "W302"] == []


def test_mutators_on_different_events_do_not_race() -> None:
    other = "mutator other {\n  on prompts/get request\n  redact $..email\n}\n"
    result = check_sources({"a.policy": _mutator("a"), "b.policy": other})
    assert [d for d in result.diagnostics if d.code == "W302"] == []

"""The shipped packs on the labelled corpus: the goals of docs/patterns.md hold.

The corpus (tests/patterns/corpus/records.jsonl) is written by the seeded
generate.py beside it; scripts/score_packs.py prints the same figures.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The scorer is measurement code that does not ship in the wheel (bench/pack_score.py).
sys.path.insert(0, str(ROOT / "bench"))

from pack_score import (  # noqa: E402
    Record,
    Report,
    load_corpus,
    replaced_regions,
    score,
)

from policy_engine.compiler import compile_policies, compile_sources  # noqa: E402

CORPUS = ROOT / "tests" / "patterns" / "corpus" / "records.jsonl"
HELDOUT = ROOT / "tests" / "patterns" / "corpus" / "heldout" / "heldout.jsonl"
HELDOUT2 = ROOT / "tests" / "patterns" / "corpus" / "heldout2" / "heldout2.jsonl"
PACKS = ("secret-redactor", "pii-redactor")

RECALL_GOAL = 0.98
FALSE_POSITIVE_GOAL = 0.01
# What the packs reach on the tuning split after round 2 of issue 30
# (99.82% recall, 0.49% false positives): a floor against regressions.
TUNING_RECALL_FLOOR = 0.998
TUNING_FALSE_POSITIVE_CEILING = 0.005
# No type may hide behind the average.
TYPE_RECALL_FLOOR = 0.90


@pytest.fixture(scope="module")
def records() -> list[Record]:
    return load_corpus(CORPUS)


@pytest.fixture(scope="module")
def report(records: list[Record]) -> Report:
    return score(compile_policies([ROOT / "policies"]), PACKS, records)


def test_the_corpus_is_as_large_and_varied_as_promised(records: list[Record]) -> None:
    positives = [r for r in records if r.kind == "positive"]
    negatives = [r for r in records if r.kind == "negative"]
    assert len(positives) >= 3000
    assert len(negatives) >= 1000
    assert len({r.label for r in positives}) >= 17
    assert len({r.label for r in negatives}) >= 20
    assert len({r.context for r in records}) >= 10
    for record in records:
        for start, end, _ in record.spans:
            assert 0 <= start < end <= len(record.text), record.id
        assert bool(record.spans) == (record.kind == "positive"), record.id


@pytest.mark.parametrize(
    ("script", "committed"),
    [
        (CORPUS.parent / "generate.py", CORPUS),
        (HELDOUT.parent / "generate.py", HELDOUT),
        (HELDOUT2.parent / "generate.py", HELDOUT2),
    ],
    ids=["tuning", "heldout", "heldout2"],
)
def test_the_corpus_is_what_its_generator_writes(
    tmp_path: Path, script: Path, committed: Path
) -> None:
    """Seeded: running the committed generator reproduces the committed file."""
    line = f'OUT = Path(__file__).resolve().parent / "{committed.name}"'
    source = script.read_text(encoding="utf-8")
    assert line in source
    copy = tmp_path / "generate.py"
    copy.write_text(
        source.replace(line, f"OUT = Path({str(tmp_path / committed.name)!r})"), encoding="utf-8"
    )
    subprocess.run([sys.executable, str(copy)], check=True, capture_output=True)
    assert (tmp_path / committed.name).read_bytes() == committed.read_bytes()


def test_recall_meets_the_goal(report: Report) -> None:
    assert report.recall >= RECALL_GOAL, report.render()
    assert report.recall >= TUNING_RECALL_FLOOR, report.render()
    for name, total in report.positives.items():
        assert report.caught[name] / total >= TYPE_RECALL_FLOOR, (name, report.render())


def test_false_positive_rate_meets_the_goal(report: Report) -> None:
    assert report.false_positive_rate <= FALSE_POSITIVE_GOAL, report.render()
    assert report.false_positive_rate <= TUNING_FALSE_POSITIVE_CEILING, report.render()


def test_no_damage_outside_the_labelled_values(report: Report) -> None:
    assert report.damaged_records == 0, report.damage[:10]
    assert report.unaligned == 0


def test_the_report_names_every_type_and_category(report: Report, records: list[Record]) -> None:
    figures = report.as_dict()
    assert set(figures["recall_by_type"]) == {r.label for r in records if r.kind == "positive"}
    assert set(figures["false_positives_by_category"]) == {
        r.label for r in records if r.kind == "negative"
    }
    assert json.loads(json.dumps(figures)) == figures
    assert "recall" in report.render()


# --- the held-out splits: measured, never tuned against -----------------------

# The figures of docs/patterns.md after round 2 of issue 30: floors against
# regressions, not goals to tune towards. The first split: 99.91% recall,
# 3.70% false positives (before round 2: 97.92% and 3.70%). The second
# split, written and scored before round 2 changed any pattern: 99.56% and
# 0.00% (before: 94.94% and 7.41%, tests/patterns/corpus/heldout2/score-before.json).
HELDOUT_FLOORS = {
    "heldout": (HELDOUT, 7, 0.999, 0.0371),
    "heldout2": (HELDOUT2, 6, 0.995, 0.0),
}


@pytest.mark.parametrize("split", sorted(HELDOUT_FLOORS))
def test_a_heldout_split_does_not_regress(split: str) -> None:
    path, contexts, recall_floor, false_positive_ceiling = HELDOUT_FLOORS[split]
    records = load_corpus(path)
    assert len({r.context for r in records}) >= contexts
    assert not {r.text for r in records} & {r.text for r in load_corpus(CORPUS)}
    report = score(compile_policies([ROOT / "policies"]), PACKS, records)
    assert report.recall >= recall_floor, report.render()
    assert report.false_positive_rate <= false_positive_ceiling, report.render()
    assert report.damaged_records == 0
    assert report.unaligned == 0


def test_the_second_heldout_split_keeps_its_score_before_tuning() -> None:
    """The one score taken before round 2 changed a pattern stays committed beside the split."""
    before = json.loads((HELDOUT2.parent / "score-before.json").read_text(encoding="utf-8"))
    assert before["recall"] == 0.9494
    assert before["false_positive_rate"] == 0.0741
    assert set(before["recall_by_type"]) == {
        r.label for r in load_corpus(HELDOUT2) if r.kind == "positive"
    }


# --- the scorer itself ---------------------------------------------------------

PLACEHOLDER = r"\[(?:REDACTED|SECRET)(?::[A-Za-z0-9_]+)?\]"


def test_alignment_finds_each_replaced_region() -> None:
    original = "key=abc123 and mail a@b.co."
    output = "key=[SECRET:K] and mail [REDACTED:EMAIL]."
    assert replaced_regions(original, output, PLACEHOLDER) == [(4, 10), (20, 26)]
    assert replaced_regions(original, original, PLACEHOLDER) == []
    assert replaced_regions(original, "something else", PLACEHOLDER) is None


def _record(kind: str, label: str, text: str, spans: list[tuple[int, int, str]]) -> Record:
    return Record(f"t-{label}", kind, label, "test", text, tuple(spans))


def test_scoring_counts_misses_false_positives_and_damage() -> None:
    policy = compile_sources(
        {
            "p.policy": """
mutator whole { on tools/call response redact $..text matching /key=[a-z0-9]+/ with "[SECRET:K]" }
mutator value {
  on tools/call response
  redact $..text matching /pin (?P<value>[0-9]+)/ with "[REDACTED]"
}
"""
        }
    )
    records = [
        _record("positive", "key", "key=abc1", [(4, 8, "key")]),  # caught, label damaged
        _record("positive", "pin", "pin 1234", [(4, 8, "pin")]),  # caught cleanly
        _record("positive", "pin", "pin: 99", [(5, 7, "pin")]),  # missed
        _record("negative", "word", "key=zz", []),  # false positive
        _record("negative", "word", "nothing", []),
    ]
    report = score(policy, ("whole", "value"), records)
    assert report.caught == Counter({"key": 1, "pin": 1})
    assert report.positives == Counter({"key": 1, "pin": 2})
    assert report.false_positives == Counter({"word": 1})
    assert report.damaged == Counter({"key": 1})
    assert report.damaged_chars == 4
    assert report.misses == ["t-pin"]
    assert report.unaligned == 0

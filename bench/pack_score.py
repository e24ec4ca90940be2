"""Scores redaction packs on a labelled corpus: recall, false positives, damage.

A corpus is JSON lines, one record each: ``kind`` (``positive`` or
``negative``), ``label`` (the value's type, or the negative's category),
``context``, ``text`` and ``spans`` (``[start, end, type]``: the characters a
redactor must replace; nothing else in the text is sensitive). Each text goes
through the policy set's mutators exactly as a tool result would
(``tools/call`` response, ``content[0].text``), and the output is aligned with
the input on the replacement tokens to learn which characters were replaced.

* A labelled value is **caught** when every one of its characters was replaced.
* A negative is a **false positive** when anything in it was replaced.
* **Damage** is a replaced character outside every labelled span of a
  positive: the label of ``api_key=...`` or a connection string's host.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import re2

from policy_engine.compiler import PolicySet
from policy_engine.wire import MutationResult

# What the shipped packs write in place of a value: [REDACTED:EMAIL], [SECRET:JWT].
DEFAULT_PLACEHOLDER = r"\[(?:REDACTED|SECRET)(?::[A-Za-z0-9_]+)?\]"


@dataclass(frozen=True)
class Record:
    id: str
    kind: str
    label: str
    context: str
    text: str
    spans: tuple[tuple[int, int, str], ...]


def load_corpus(path: str | Path) -> list[Record]:
    records = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            raw = json.loads(line)
            spans = tuple((int(s), int(e), str(t)) for s, e, t in raw["spans"])
            records.append(
                Record(raw["id"], raw["kind"], raw["label"], raw["context"], raw["text"], spans)
            )
    return records


def replaced_regions(original: str, output: str, placeholder: str) -> list[tuple[int, int]] | None:
    """Where in ``original`` the placeholders of ``output`` stand, or None if they do not fit.

    The text between placeholders is literal, so the output is a template of
    the input: ``\\A lit0 (.+?) lit1 (.+?) ... \\z``. The first consistent
    alignment is taken.
    """
    if original == output:
        return []
    pieces: list[str] = []
    last = 0
    for match in re2.finditer(placeholder, output):
        pieces.append(output[last : match.start()])
        last = match.end()
    pieces.append(output[last:])
    if len(pieces) == 1:
        return None
    template = "(.+?)".join(re2.escape(piece) for piece in pieces)
    aligned = re2.search(f"(?s)\\A{template}\\z", original)
    if aligned is None:
        return None
    return [aligned.span(i) for i in range(1, len(pieces))]


@dataclass
class Report:
    positives: Counter[str] = field(default_factory=Counter)
    caught: Counter[str] = field(default_factory=Counter)
    negatives: Counter[str] = field(default_factory=Counter)
    false_positives: Counter[str] = field(default_factory=Counter)
    damaged: Counter[str] = field(default_factory=Counter)
    damaged_chars: int = 0
    unaligned: int = 0
    misses: list[str] = field(default_factory=list)
    flagged: list[str] = field(default_factory=list)
    damage: list[str] = field(default_factory=list)

    @property
    def recall(self) -> float:
        total = sum(self.positives.values())
        return sum(self.caught.values()) / total if total else 1.0

    @property
    def false_positive_rate(self) -> float:
        total = sum(self.negatives.values())
        return sum(self.false_positives.values()) / total if total else 0.0

    @property
    def damaged_records(self) -> int:
        return sum(self.damaged.values())

    def as_dict(self) -> dict[str, Any]:
        return {
            "recall": round(self.recall, 4),
            "false_positive_rate": round(self.false_positive_rate, 4),
            "damaged_records": self.damaged_records,
            "damaged_chars": self.damaged_chars,
            "recall_by_type": {t: [self.caught[t], n] for t, n in sorted(self.positives.items())},
            "false_positives_by_category": {
                c: [self.false_positives[c], n] for c, n in sorted(self.negatives.items())
            },
        }

    def render(self) -> str:
        lines = ["recall by type:"]
        for name, total in sorted(self.positives.items()):
            caught = self.caught[name]
            damaged = self.damaged[name]
            extra = f"  damaged {damaged}" if damaged else ""
            lines.append(f"  {name:<20} {caught:>5}/{total:<5} {caught / total:7.1%}{extra}")
        lines.append("false positives by category:")
        for name, total in sorted(self.negatives.items()):
            flagged = self.false_positives[name]
            lines.append(f"  {name:<24} {flagged:>4}/{total:<4} {flagged / total:7.1%}")
        lines.append(
            f"recall {self.recall:.2%} of {sum(self.positives.values())}, "
            f"false positives {self.false_positive_rate:.2%} of {sum(self.negatives.values())}, "
            f"damaged records {self.damaged_records} ({self.damaged_chars} chars)"
        )
        return "\n".join(lines)


def redact(policy_set: PolicySet, names: Sequence[str], text: str) -> str:
    """The text after each named mutator, in order, as a tools/call result."""
    payload: Any = {"content": [{"type": "text", "text": text}]}
    for name in names:
        result = policy_set.invoke_sync(name, "tools/call", "response", payload)
        if isinstance(result, MutationResult) and result.modified:
            payload = result.payload
    return str(payload["content"][0]["text"])


def _covered(regions: list[tuple[int, int]], start: int, end: int) -> bool:
    position = start
    for a, b in sorted(regions):
        if a <= position < b:
            position = b
        if position >= end:
            return True
    return position >= end


def _outside(regions: list[tuple[int, int]], spans: Iterable[tuple[int, int, str]]) -> int:
    inside: set[int] = set()
    for start, end, _ in spans:
        inside.update(range(start, end))
    return sum(1 for a, b in regions for i in range(a, b) if i not in inside)


def score(
    policy_set: PolicySet,
    names: Sequence[str],
    records: Iterable[Record],
    placeholder: str = DEFAULT_PLACEHOLDER,
) -> Report:
    report = Report()
    for record in records:
        output = redact(policy_set, names, record.text)
        regions = replaced_regions(record.text, output, placeholder)
        if regions is None:  # changed in a way that cannot be aligned: count it all
            report.unaligned += 1
            regions = [(0, len(record.text))]
        if record.kind == "negative":
            report.negatives[record.label] += 1
            if regions:
                report.false_positives[record.label] += 1
                report.flagged.append(record.id)
            continue
        report.positives[record.label] += 1
        if all(_covered(regions, start, end) for start, end, _ in record.spans):
            report.caught[record.label] += 1
        else:
            report.misses.append(record.id)
        outside = _outside(regions, record.spans)
        if outside:
            report.damaged[record.label] += 1
            report.damaged_chars += outside
            report.damage.append(record.id)
    return report

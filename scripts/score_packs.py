"""Prints how the shipped redaction packs score on the labelled corpus.

    python scripts/score_packs.py [--json] [--show misses|flagged|damage]

Recall per type, false positives per category and damage outside the
labelled spans (see bench/pack_score.py for the definitions).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The scorer is measurement code, not the package's: it lives with the benchmarks.
sys.path.insert(0, str(ROOT / "bench"))

from pack_score import load_corpus, score  # noqa: E402

from policy_engine.compiler import compile_policies  # noqa: E402

CORPUS = ROOT / "tests" / "patterns" / "corpus" / "records.jsonl"
PACKS = ("secret-redactor", "pii-redactor")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--policies", type=Path, default=ROOT / "policies")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--show", choices=["misses", "flagged", "damage"], action="append")
    args = parser.parse_args()
    records = load_corpus(args.corpus)
    report = score(compile_policies([args.policies]), PACKS, records)
    print(json.dumps(report.as_dict(), indent=2) if args.json else report.render())
    by_id = {r.id: r for r in records}
    for what in args.show or []:
        for record_id in getattr(report, what):
            record = by_id[record_id]
            print(f"--- {what} {record_id} {record.label} {record.context}: {record.text!r}")


if __name__ == "__main__":
    main()

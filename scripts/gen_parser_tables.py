"""Rewrite ``policy_engine/language/data/parser_tables.bin`` from ``grammar/policy.lark``.

Run it after editing the grammar or upgrading lark (a test fails until then):

    PYTHONPATH=$PWD .venv/bin/python scripts/gen_parser_tables.py
"""

from __future__ import annotations

from pathlib import Path

from policy_engine.language.grammar import grammar_path
from policy_engine.language.parser_tables import TABLES_FILE, serialize

STARTS = ("start", "condition")


def main() -> None:
    target = (
        Path(__file__).resolve().parents[1] / "policy_engine" / "language" / "data" / TABLES_FILE
    )
    target.write_bytes(serialize(grammar_path().read_text(encoding="utf-8"), STARTS))
    print(f"wrote {target} ({target.stat().st_size} bytes)")


if __name__ == "__main__":
    main()

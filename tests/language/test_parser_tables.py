"""The parser tables shipped in the package are current and parse as a built parser does."""

from __future__ import annotations

import marshal
import zlib
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from lark import Lark

from policy_engine.language import parser_tables
from policy_engine.language.grammar import grammar_path, parser
from policy_engine.language.path_filters import condition_parser

ROOT = Path(__file__).resolve().parents[2]


def _shipped() -> dict[str, Any]:
    blob = (resources.files("policy_engine.language") / "data" / "parser_tables.bin").read_bytes()
    tables: dict[str, Any] = marshal.loads(zlib.decompress(blob))
    return tables


@pytest.mark.parametrize("start", ["start", "condition"])
def test_the_shipped_tables_were_built_from_this_grammar(start: str) -> None:
    grammar = grammar_path().read_text(encoding="utf-8")
    key, _ = _shipped()[start]
    assert key == parser_tables.table_key(grammar, start), (
        "policy_engine/language/data/parser_tables.bin is stale: run "
        "scripts/gen_parser_tables.py after editing grammar/policy.lark or upgrading lark"
    )


def test_the_parsers_come_from_the_shipped_tables() -> None:
    assert parser().source_path == "<deserialized>"
    assert condition_parser().source_path == "<deserialized>"


def _outcome(lark: Lark, text: str) -> Any:
    try:
        return lark.parse(text)
    except Exception as err:  # the same error, at the same place, expecting the same
        expected = sorted(getattr(err, "expected", None) or ())
        return (
            type(err).__name__,
            getattr(err, "line", None),
            getattr(err, "column", None),
            expected,
        )


def test_the_loaded_parser_parses_as_a_built_one() -> None:
    grammar = grammar_path().read_text(encoding="utf-8")
    built = parser_tables.build(grammar, "start", {}, cache=False)
    files = sorted(ROOT.glob("policies/*.policy")) + sorted(ROOT.glob("tests/**/*.policy"))
    assert len(files) > 50
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # a case of a file that is not UTF-8: refused before parsing
        assert _outcome(parser(), text) == _outcome(built, text), path


def test_a_key_that_does_not_match_builds_the_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[str] = []
    real_build = parser_tables.build

    def recording_build(grammar: str, start: str, callbacks: Any, *, cache: bool = True) -> Lark:
        built.append(start)
        return real_build(grammar, start, callbacks, cache=cache)

    monkeypatch.setattr(parser_tables, "table_key", lambda grammar, start: "stale")
    monkeypatch.setattr(parser_tables, "build", recording_build)
    grammar = grammar_path().read_text(encoding="utf-8")
    rebuilt = parser_tables.load(grammar, "condition", {})
    assert built == ["condition"]
    assert rebuilt.parse('$.a == "b"') is not None

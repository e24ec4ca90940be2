"""The grammar's LALR tables, shipped with the package, so no run builds them.

Building the two parsers (a policy file, and a path filter's condition) from
``policy.lark`` costs about 0.25 s of CPU, more than the rest of a cold
``policyc check`` of a small set: lark's own cache (a file in the temp
directory) only helps the second run on a machine, and never a fresh container
or CI. ``data/parser_tables.bin`` holds both parsers as lark serializes them
(plain data: dicts, lists, strings and numbers, written with ``marshal``, so
loading them runs no code), keyed on the grammar's text, the start symbol and
lark's version. A key that does not match (the grammar was edited, or lark
upgraded) is no error: the parser is built as before, through lark's cache.
``scripts/gen_parser_tables.py`` rewrites the file, and a test fails while it
is stale.
"""

from __future__ import annotations

import hashlib
import marshal
import zlib
from collections.abc import Callable, Mapping
from importlib import resources
from typing import Any

import lark
from lark import Lark, Token
from lark.grammar import Rule
from lark.lexer import TerminalDef

TABLES_FILE = "parser_tables.bin"
_OPTIONS: dict[str, Any] = {
    "parser": "lalr",
    "lexer": "contextual",
    "propagate_positions": True,
    "maybe_placeholders": True,
}

Callbacks = Mapping[str, Callable[[Token], Token]]


def table_key(grammar: str, start: str) -> str:
    """What a shipped table must have been built from to be used."""
    text = f"{lark.__version__}\0{start}\0{sorted(_OPTIONS.items())}\0{grammar}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def build(grammar: str, start: str, callbacks: Callbacks, *, cache: bool = True) -> Lark:
    """The parser built from the grammar (lark caches the tables in the temp directory)."""
    return Lark(grammar, start=start, lexer_callbacks=dict(callbacks), cache=cache, **_OPTIONS)


def load(grammar: str, start: str, callbacks: Callbacks) -> Lark:
    """The parser from the shipped tables when they were built from this grammar, else built."""
    entry = _shipped().get(start)
    if entry is not None and entry[0] == table_key(grammar, start):
        try:  # `_load` is lark's own, not public: a lark that changed it builds instead
            loaded: Lark = Lark.__new__(Lark)._load(
                entry[1], lexer_callbacks=dict(callbacks), propagate_positions=True
            )
        except Exception:
            return build(grammar, start, callbacks)
        return loaded
    return build(grammar, start, callbacks)


def serialize(grammar: str, starts: tuple[str, ...]) -> bytes:
    """The tables file for these start symbols (``scripts/gen_parser_tables.py``)."""
    from lark.lark import _LOAD_ALLOWED_OPTIONS  # private: needed only to write the file

    tables: dict[str, tuple[str, dict[str, Any]]] = {}
    for start in starts:
        parser = build(grammar, start, {}, cache=False)
        data, memo = parser.memo_serialize([TerminalDef, Rule])
        data["options"] = {
            name: value
            for name, value in data["options"].items()
            if name not in _LOAD_ALLOWED_OPTIONS
        }
        tables[start] = (table_key(grammar, start), {"data": data, "memo": memo})
    return zlib.compress(marshal.dumps(tables), 9)


_loaded: dict[str, tuple[str, dict[str, Any]]] | None = None


def _shipped() -> dict[str, tuple[str, dict[str, Any]]]:
    global _loaded
    if _loaded is None:
        try:
            blob = (resources.files("policy_engine.language") / "data" / TABLES_FILE).read_bytes()
            _loaded = marshal.loads(zlib.decompress(blob))
        except (OSError, ValueError, EOFError, TypeError, zlib.error):
            _loaded = {}
    return _loaded

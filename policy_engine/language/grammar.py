"""Finds the lark grammar and builds the parser once per process.

The grammar lives in the repository's ``grammar/`` folder; the wheel ships it
inside the package as ``policy_engine/grammar/``. Both places are tried so an
editable checkout and an installed wheel behave the same from any directory.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from importlib import resources
from pathlib import Path

from lark import Lark, Token

from .parser_tables import load

GRAMMAR_FILE = "policy.lark"


def grammar_path() -> Path:
    packaged = resources.files("policy_engine") / "grammar" / GRAMMAR_FILE
    if packaged.is_file():
        return Path(str(packaged))
    in_checkout = Path(__file__).resolve().parents[2] / "grammar" / GRAMMAR_FILE
    if in_checkout.is_file():
        return in_checkout
    raise FileNotFoundError(f"policy grammar not found (looked for {packaged} and {in_checkout})")


_comment_sink: ContextVar[list[Token] | None] = ContextVar("comment_sink", default=None)

# Keywords that start a rule, and `expect`, whose `allow`/`deny` is not one.
RULE_KEYWORDS = (
    "DENY",
    "WARN",
    "INFO",
    "ALLOW",
    "LIMIT",
    "REDACT",
    "MASK",
    "HASH",
    "SET",
    "REMOVE",
    "TRUNCATE",
)


class TooManyRules(Exception):
    """Raised from the lexer once a file certainly holds more rules than allowed."""

    def __init__(self, token: Token) -> None:
        super().__init__(str(token))
        self.token = token


class _RuleBudget:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.seen = 0

    def rule(self, token: Token) -> Token:
        self.seen += 1
        if self.seen > self.limit:
            raise TooManyRules(token)
        return token

    def expect(self, token: Token) -> Token:
        self.seen -= 1  # `expect allow` / `expect deny` lex as rule keywords
        return token


_rule_budget: ContextVar[_RuleBudget | None] = ContextVar("rule_budget", default=None)


def _on_rule_keyword(token: Token) -> Token:
    budget = _rule_budget.get()
    return token if budget is None else budget.rule(token)


def _on_expect(token: Token) -> Token:
    budget = _rule_budget.get()
    return token if budget is None else budget.expect(token)


@contextmanager
def counting_rules(limit: int) -> Iterator[None]:
    """Stop lexing as soon as more than ``limit`` rules are certain (a lower bound).

    A file of a million rules is refused after the first ``limit`` of them are
    lexed, instead of after parsing all of it.
    """
    reset = _rule_budget.set(_RuleBudget(limit))
    try:
        yield
    finally:
        _rule_budget.reset(reset)


def _on_comment(token: Token) -> Token:
    sink = _comment_sink.get()
    if sink is not None:
        sink.append(token)
    return token


@contextmanager
def collecting_comments() -> Iterator[list[Token]]:
    """Comments are ignored by the grammar; this catches them as the lexer passes."""
    sink: list[Token] = []
    reset = _comment_sink.set(sink)
    try:
        yield sink
    finally:
        _comment_sink.reset(reset)


@cache
def parser() -> Lark:
    # From the tables shipped in the package (``parser_tables``): building them costs
    # about 0.2 s; without them (a grammar edited since), built through lark's cache.
    return load(
        grammar_path().read_text(encoding="utf-8"),
        "start",
        {
            "COMMENT": _on_comment,
            "EXPECT": _on_expect,
            **{keyword: _on_rule_keyword for keyword in RULE_KEYWORDS},
        },
    )

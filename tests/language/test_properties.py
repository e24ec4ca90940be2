"""Property tests: no input makes the checker raise, and every diagnostic points inside the file.

Inputs are arbitrary text, text built from the language's own tokens, and
mutations of the shipped policies (characters and tokens deleted, duplicated,
swapped or inserted), which reach far deeper into the checker than random
text does.
"""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policy_engine.language.codes import CODES
from policy_engine.language.diagnostics import Severity
from policy_engine.language.parser import MAX_SYNTAX_ERRORS
from policy_engine.language.pipeline import STAGES, CheckResult, check_sources

REPO = Path(__file__).resolve().parents[2]
SHIPPED = sorted((REPO / "policies").glob("*.policy"))
AST_CASES = sorted((Path(__file__).parent / "cases" / "ast").glob("*.policy"))
CORPUS = [p.read_text(encoding="utf-8") for p in SHIPPED + AST_CASES]
FILE = "fuzz.policy"
FAST = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

TOKEN = re.compile(r"\s+|\"(?:[^\"\\\n]|\\.)*\"|/(?:[^/\\\n]|\\.)+/[a-z]*|\w+|.", re.S)
WORDS = [
    "validator", "mutator", "pattern", "test", "on", "deny", "allow", "warn", "info", "if",
    "unless", "and", "or", "not", "in", "like", "matches", "is", "exists", "missing", "any",
    "all", "param", "context", "priority", "request", "response", "both", "mode", "fail",
    "redact", "mask", "hash", "set", "remove", "truncate", "limit", "size", "length", "count",
    "given", "expect", "config", "only", "side", "tools/call", "tools/cal", "*", "$", "$.name",
    "$..x", "$.a[*]", "$['k']", "$.params.name", "EMAIL", "NOPE", "/a+/", "/(?=x)/", "/a*/",
    '"s"', "'s'", '"\\q"', "1", "-1", "1.5", "1e99", "3000000000", "{", "}", "[", "]", "(",
    ")", ",", ":", "=", "==", "<", "!", "&&", "#", "\n", " ", "\t", "\r\n", "é", "\x00",
]  # fmt: skip


def check(text: str, stage: str = "lint") -> CheckResult:
    result = check_sources({FILE: text}, until=stage)  # type: ignore[arg-type]
    assert_well_formed(result, text)
    return result


def assert_well_formed(result: CheckResult, text: str) -> None:
    lines = text.count("\n") + 1
    for d in result.diagnostics:
        assert d.code in CODES, d
        assert d.severity is (Severity.ERROR if d.code.startswith("E") else Severity.WARNING), d
        assert d.message and d.message == d.message.strip() and "\n" not in d.message, d
        span = d.span
        assert span.file == FILE, d
        assert 1 <= span.line <= lines + 1, (d, lines)
        assert span.line <= span.end_line <= lines + 1, (d, lines)
        assert span.column >= 1 and span.end_column >= 1, d
        if span.line == span.end_line:
            assert span.column <= span.end_column, d
    if any(d.code.startswith("E0") for d in result.diagnostics):
        # A file with a syntax error has no tree to check further: only syntax
        # errors are reported, one per broken top-level block, at most ten.
        assert all(d.code.startswith("E0") for d in result.diagnostics), result.diagnostics
        assert len(result.diagnostics) <= MAX_SYNTAX_ERRORS, result.diagnostics
        lines_hit = [d.span.line for d in result.diagnostics]
        assert len(lines_hit) == len(set(lines_hit)), result.diagnostics


@FAST
@given(st.text(max_size=200))
def test_any_text_is_checked_without_raising(text: str) -> None:
    check(text)


@FAST
@given(st.lists(st.sampled_from(WORDS), max_size=40).map(" ".join))
def test_token_soup_is_checked_without_raising(text: str) -> None:
    check(text)


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text)


@st.composite
def mutated_policy(draw: st.DrawFn) -> str:
    source = draw(st.sampled_from(CORPUS))
    by_token = draw(st.booleans())
    parts: list[str] = tokens(source) if by_token else list(source)
    for _ in range(draw(st.integers(1, 4))):
        if not parts:
            break
        i = draw(st.integers(0, len(parts) - 1))
        j = draw(st.integers(0, len(parts) - 1))
        action = draw(st.sampled_from(["delete", "duplicate", "swap", "insert"]))
        if action == "delete":
            del parts[i]
        elif action == "duplicate":
            parts.insert(i, parts[i])
        elif action == "swap":
            parts[i], parts[j] = parts[j], parts[i]
        else:
            parts.insert(i, draw(st.sampled_from(WORDS)))
    return "".join(parts)


@FAST
@given(mutated_policy())
def test_mutated_policies_are_checked_without_raising(text: str) -> None:
    check(text)


@settings(max_examples=100, deadline=None)
@given(mutated_policy(), st.sampled_from(STAGES))
def test_every_stage_can_be_the_last(text: str, stage: str) -> None:
    result = check(text, stage)
    assert (result.model is None) == (stage == "parse")
    assert set(result.timings) == set(STAGES[: STAGES.index(stage) + 1])


def test_the_corpus_itself_is_clean_of_errors() -> None:
    """The mutations start from files that check without errors (the shipped ones as a set)."""
    shipped = check_sources({p.name: p.read_text(encoding="utf-8") for p in SHIPPED})
    assert shipped.diagnostics == []
    for path in AST_CASES:
        assert check(path.read_text(encoding="utf-8")).errors == [], path.name


def test_mutations_reach_beyond_the_parser() -> None:
    """Deterministic spot check that token mutations produce more than syntax errors."""
    source = (REPO / "policies" / "tool-guard.policy").read_text(encoding="utf-8")
    parts = tokens(source)
    assert "".join(parts) == source
    seen: set[str] = set()
    for i, part in enumerate(parts):
        if part.strip():
            seen |= {d.code for d in check("".join(parts[:i] + parts[i + 1 :])).diagnostics}
    assert any(code.startswith("E0") for code in seen)
    assert any(not code.startswith("E0") for code in seen)

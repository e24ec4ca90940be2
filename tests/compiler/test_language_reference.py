"""docs/language.md is executable: every ```policy block compiles and its tests pass.

Each block is a complete policy set with at least one `test` block. Together
the blocks must exercise every rule of the grammar: each alias (`-> name`)
and each rule that is not inlined (`?rule` never appears in a parse tree, so
it is covered through its alternatives).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from lark import Tree

from policy_engine.compiler import CompileError, compile_sources
from policy_engine.language import ast
from policy_engine.language.builtin_patterns import BUILTIN_PATTERNS
from policy_engine.language.grammar import grammar_path, parser
from policy_engine.language.parser import parse_source
from policy_engine.testing import run_tests

DOC = Path(__file__).resolve().parents[2] / "docs" / "language.md"
FENCE = re.compile(r"^```policy[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
JSON_FENCE = re.compile(r"^```json[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
RULE_DEF = re.compile(r"^([?!]?)([a-z_][a-z0-9_]*)\s*:", re.MULTILINE)
ALIAS = re.compile(r"->\s*([a-z_][a-z0-9_]*)")


def policy_blocks() -> list[tuple[int, str]]:
    """(line number, text) of every ```policy block in the reference."""
    text = DOC.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start()) + 2, m.group(1)) for m in FENCE.finditer(text)]


BLOCKS = policy_blocks()


def grammar_rule_names() -> set[str]:
    """Aliases and rule names written in grammar/policy.lark."""
    text = grammar_path().read_text(encoding="utf-8")
    text = "\n".join(line.split("//")[0] for line in text.splitlines())
    return {name for _, name in RULE_DEF.findall(text)} | set(ALIAS.findall(text))


def grammar_aliases() -> set[str]:
    text = grammar_path().read_text(encoding="utf-8")
    return set(ALIAS.findall("\n".join(line.split("//")[0] for line in text.splitlines())))


def possible_tree_names() -> set[str]:
    """What `tree.data` can be: an alias, or the name of a rule that is not inlined.

    A `?rule` alternative without an alias is inlined, and a rule whose every
    alternative has an alias (`limit_rule`, `type_ref`) never shows its own
    name; both are covered through their alternatives.
    """
    names = set()
    for rule in parser().rules:
        if rule.alias is None and rule.options.expand1:
            continue
        name = str(rule.alias or rule.origin.name)
        if not name.startswith("_"):
            names.add(name)
    return names


def tree_names(text: str) -> set[str]:
    found: set[str] = set()
    for node in parser().parse(text).iter_subtrees():
        assert isinstance(node, Tree)
        found.add(str(node.data))
    return found


def test_the_reference_has_examples() -> None:
    assert len(BLOCKS) >= 20


@pytest.mark.parametrize(("line", "text"), BLOCKS, ids=[f"line{line}" for line, _ in BLOCKS])
async def test_example_compiles_and_its_tests_pass(line: int, text: str) -> None:
    outcome = parse_source(text, f"language.md:{line}")
    assert outcome.file is not None, outcome.diagnostics
    tests = [item for item in outcome.file.items if isinstance(item, ast.TestBlock)]
    assert tests, f"the example at line {line} has no test block"
    try:
        policy_set = compile_sources({f"language.md:{line}": text})
    except CompileError as exc:
        pytest.fail(f"example at line {line} does not compile:\n{exc.diagnostics_text}")
    report = await run_tests(policy_set)
    assert len(report.cases) == len(tests)
    failures = [f"{case.name}: {'; '.join(case.failures)}" for case in report.failed]
    assert not failures, "\n".join(failures)


def test_every_grammar_rule_is_exercised() -> None:
    possible = possible_tree_names()
    assert grammar_aliases() <= possible
    wanted = grammar_rule_names() & possible
    assert {"start", "interceptor", "set_rule", "expect_payload", "hook_priority"} <= wanted
    seen: set[str] = set()
    for _, text in BLOCKS:
        seen |= tree_names(text)
    missing = sorted(wanted - seen)
    assert not missing, f"no example in docs/language.md uses: {', '.join(missing)}"


def test_the_config_schema_shown_is_the_one_compiled() -> None:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## 4. Params and config") : text.index("## 5. Validator rules")]
    shown = json.loads(JSON_FENCE.findall(section)[0])
    (example,) = FENCE.findall(section)
    descriptor = compile_sources({"budget.policy": example}).interceptors["budget"].descriptor
    assert descriptor.to_wire()["configSchema"] == shown


def test_every_builtin_pattern_is_listed() -> None:
    text = DOC.read_text(encoding="utf-8")
    missing = [name for name in BUILTIN_PATTERNS if f"| `{name}` |" not in text]
    assert not missing

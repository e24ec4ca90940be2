"""Hostile policy files get one diagnostic each, not a RecursionError, gigabytes or forever.

The inputs are the ones issue 9 found: a 600-term `or`, a 10,000-term `and`, 500
nested `not`, a 1,000-deep list literal, a 300-deep JSON value in a test block,
a 50 MB file of one string literal and a file of 1.1 million rules.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from policy_engine.compiler import Limits, compile_sources
from policy_engine.language.limits import SourceLimits
from policy_engine.language.pipeline import check_paths, check_sources

HEAD = "validator v {\n  on tools/call request\n"


def _rule(condition: str) -> str:
    return f'{HEAD}  deny if {condition} "x"\n}}\n'


def _codes(text: str, limits: SourceLimits | None = None) -> list[str]:
    return [d.code for d in check_sources({"f.policy": text}, limits=limits).diagnostics]


def test_wide_and_and_or_chains_are_one_level_and_compile() -> None:
    wide_or = " or ".join(f"$.arguments.a == {i}" for i in range(600))
    wide_and = " and ".join(f"$.arguments.a != {i}" for i in range(10_000))
    for text in (_rule(wide_or), _rule(wide_and)):
        policies = compile_sources({"f.policy": text})
        payload = {"name": "t", "arguments": {"a": 599}}
        result = policies.invoke_sync("v", "tools/call", "request", payload).to_wire()
        assert result["valid"] is (text == _rule(wide_and))


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (_rule("not " * 500 + "$.a == 1"), "condition"),
        (_rule("$.a in " + "[" * 1000 + "1" + "]" * 1000), "list"),
        (_rule("lower(" * 300 + "$.a" + ")" * 300 + ' == "x"'), "function call"),
        (
            _rule("$.a == 1")
            + 'test "t" {\n  given tools/call request {"name": "t", "arguments": '
            + "[" * 300
            + "]" * 300
            + "}\n  expect allow\n}\n",
            "JSON value",
        ),
    ],
    ids=["500 not", "1000-deep list", "300 calls", "300-deep JSON in a test"],
)
def test_deep_nesting_is_e008_with_where_and_how_to_raise_it(text: str, kind: str) -> None:
    result = check_sources({"f.policy": text})
    (diagnostic,) = result.diagnostics
    assert diagnostic.code == "E008"
    assert diagnostic.message == f"{kind} nests deeper than the limit of 100 levels"
    assert diagnostic.span.file == "f.policy" and diagnostic.span.line >= 3
    assert diagnostic.help is not None and "--max-nesting" in diagnostic.help


def test_nesting_up_to_the_limit_is_fine_and_the_limit_can_be_raised() -> None:
    assert _codes(_rule("not " * 98 + "$.arguments.a == 1")) == []
    deeper = _rule("not " * 140 + "$.arguments.a == 1")
    assert _codes(deeper) == ["E008"]
    assert _codes(deeper, SourceLimits(max_nesting=150)) == []
    with pytest.raises(ValueError):
        SourceLimits(max_nesting=151)


def test_a_50_mb_string_literal_is_refused_reading_at_most_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "huge.policy"
    path.write_text(_rule('$.a == "' + "x" * 50_000_000 + '"'), encoding="utf-8")
    tracemalloc.start()
    try:
        result = check_paths([path])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    (diagnostic,) = result.diagnostics
    assert diagnostic.code == "E009"
    assert diagnostic.message == (
        f"policy file `{path}` is larger than the limit of {1024 * 1024} bytes"
    )
    assert peak < 8 * 1024 * 1024


def test_a_million_rules_are_refused_early() -> None:
    rules = "".join(f'  deny if $.a == {i} "x"\n' for i in range(1_100_000))
    text = f"{HEAD}{rules}}}\n"
    # Under the default size limit the file is refused unread; with that lifted,
    # the rule limit stops the lexer after the first max_rules rules.
    assert _codes(text) == ["E009"]
    limits = SourceLimits(max_file_bytes=len(text) + 1, max_rules=200)
    result = check_sources({"f.policy": text}, limits=limits)
    (diagnostic,) = result.diagnostics
    assert (diagnostic.code, diagnostic.span.line) == ("E010", 3 + 200)
    assert diagnostic.help is not None and "--max-rules" in diagnostic.help


def test_the_rule_limit_counts_the_whole_set_but_not_test_expectations() -> None:
    one = _rule("$.arguments.a == 1")
    tests = "".join(
        f'test "t{i}" {{\n  given tools/call request {{"name": "t"}}\n  expect allow\n}}\n'
        for i in range(5)
    )
    limits = SourceLimits(max_rules=1)
    assert [
        d.code for d in check_sources({"a.policy": one + tests}, limits=limits).diagnostics
    ] == []
    two_files = {"a.policy": one, "b.policy": one.replace("validator v", "validator w")}
    (diagnostic,) = check_sources(two_files, limits=limits).diagnostics
    assert (diagnostic.code, diagnostic.span.file) == ("E010", "b.policy")


def test_compile_limits_ride_on_the_payload_limits() -> None:
    from policy_engine.compiler import CompileError

    with pytest.raises(CompileError) as raised:
        compile_sources(
            {"f.policy": _rule("$.a == 1")}, Limits(source=SourceLimits(max_file_bytes=8))
        )
    assert [d.code for d in raised.value.diagnostics] == ["E009"]


def _policyc(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "policy_engine.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONUTF8": "1"},
    )


@pytest.mark.parametrize("command", ["check", "test", "fmt"])
def test_every_command_takes_the_source_limits(command: str, tmp_path: Path) -> None:
    path = tmp_path / "deep.policy"
    path.write_text(_rule("not " * 20 + "$.arguments.a == 1"), encoding="utf-8")
    done = _policyc(command, "--max-nesting", "5", str(path))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "error[E008]" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def test_the_cli_refuses_a_nesting_limit_past_the_ceiling(tmp_path: Path) -> None:
    path = tmp_path / "ok.policy"
    path.write_text(_rule("$.arguments.a == 1"), encoding="utf-8")
    done = _policyc("check", "--max-nesting", "151", str(path))
    assert done.returncode == 2
    assert "151 is not in the range 1<=x<=150" in done.stderr

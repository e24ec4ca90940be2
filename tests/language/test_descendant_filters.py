"""`$..*[?(...)]` never tests the top-level values; `check` says so and what to write (W314).

By RFC 9535 (and jsonpath-ng, which the compiler is cross-checked against),
`$..*` selects every value below the root and a filter after it tests the
members of each: the root's own members are never candidates, so
`{"name": "secret"}` passes `deny if exists $..*[?(@ matches /secret/)]`.
The descendant segment with the filter inside, `$..[?(...)]`, tests the
members of the root too. The compiler keeps the standard meaning (pinned
here); `check` warns at the `..*` with the form to write instead.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from policy_engine.cli.main import cli
from policy_engine.compiler.jsonpath import compile_path
from policy_engine.language.path_syntax import parse_path
from policy_engine.language.pipeline import check_sources

POLICY = """\
validator secrets {
  on tools/call request
  deny if exists $..*[?(@ matches /secret/)] "secret at {path}"
  deny if exists $.arguments..[*][?(@ == "tok")] "token at {path}"
  deny if exists $..[?(@ matches /secret/)] "fine"
}
"""
DOCUMENT = {"name": "secret", "arguments": {"deep": {"note": "secret"}, "a": "tok"}}


def _found(source: str) -> list[str]:
    return [".".join(map(str, loc)) for _, loc in compile_path(parse_path(source)).find(DOCUMENT)]


def test_the_compiler_keeps_the_standard_meaning_of_both_forms() -> None:
    # `..*[?]` tests members of the values below the root: `name` is never a candidate.
    assert _found("$..*[?(@ == 'secret')]") == ["arguments.deep.note"]
    # `..[?]` tests the members of the root and of everything below it.
    assert _found("$..[?(@ == 'secret')]") == ["name", "arguments.deep.note"]
    assert _found("$.arguments..[?(@ == 'tok')]") == ["arguments.a"]
    assert _found("$.arguments..*[?(@ == 'tok')]") == []


def test_check_warns_at_the_wildcard_with_the_form_to_write() -> None:
    result = check_sources({"p.policy": POLICY})
    found = [d for d in result.diagnostics if d.code == "W314"]
    assert [(d.span.line, d.span.column, d.span.end_column) for d in found] == [
        (3, 19, 22),
        (4, 29, 34),
    ]
    assert "never tests the values directly under `$`" in found[0].message
    assert found[0].help is not None and "write `$..[?(@ matches /secret/)]`" in found[0].help
    assert found[1].help is not None and 'write `$.arguments..[?(@ == "tok")]`' in found[1].help


@pytest.mark.parametrize("fixed", [True, False])
def test_policyc_check_shows_the_warning_located_with_a_caret(tmp_path: Path, fixed: bool) -> None:
    source = POLICY.replace("..*[?", "..[?").replace("..[*][?", "..[?") if fixed else POLICY
    path = tmp_path / "p.policy"
    path.write_text(source, encoding="utf-8")
    out = CliRunner().invoke(cli, ["check", str(path)]).output
    if fixed:
        assert "W314" not in out
        return
    assert f"{path}:3:19: warning[W314]" in out
    assert re.search(r"^  \|\s+\^\^\^$", out, re.M)
    assert "help: write `$..[?(@ matches /secret/)]`" in out

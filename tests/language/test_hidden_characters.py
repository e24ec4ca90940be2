"""Trojan Source (CVE-2021-42574) and hostile names in output.

A policy that reads one way in review and parses another is an attack on the
reviewer: `fmt` must never turn an escaped `\\u202e` into the raw override
(and `fmt --check` must never demand it on CI), `check` must point at every
hidden character, comments included, and no output format may print a raw
control character a tools snapshot or a server put in a name.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
import re2
from click.testing import CliRunner

from policy_engine.cli.main import cli
from policy_engine.language.pipeline import check_sources

ESCAPED = """\
pattern ZW = /a\\x{200B}b/

validator v {
  on tools/call request
  deny if $.name == "shell\\u200bexec" "blocked \\u202eevil\\u202c"
  deny if $.name matches ZW
  deny if $.name in ["x\\u2066y\\u2069", "nbsp\\u00a0", "tag\\udb40\\udc41"]
}

test "a hidden name" {
  given tools/call request {"name": "shell\\u200bexec", "arguments": {"q": "\\u202e"}}
  expect deny
}
"""


def hidden(text: str) -> list[str]:
    """Controls, format characters (bidi, zero-width, tags) and odd spaces, written raw."""
    odd = {"Cc", "Cf", "Zl", "Zp", "Zs"}
    return [f"U+{ord(c):04X}" for c in text if c not in "\n " and unicodedata.category(c) in odd]


def test_fmt_keeps_escapes_for_hidden_characters(tmp_path: Path) -> None:
    path = tmp_path / "p.policy"
    path.write_text(ESCAPED, encoding="utf-8")
    check = CliRunner().invoke(cli, ["fmt", "--check", str(path)])
    assert check.exit_code == 0, check.output  # CI must not demand the raw characters
    assert CliRunner().invoke(cli, ["fmt", str(path)]).exit_code == 0
    assert hidden(path.read_text(encoding="utf-8")) == []
    assert path.read_text(encoding="utf-8") == ESCAPED


def test_fmt_writes_escapes_for_raw_hidden_characters_in_strings_and_regexes(
    tmp_path: Path,
) -> None:
    raw = ESCAPED.replace("\\x{200B}", "\u200b").replace("\\u200b", "\u200b")
    raw = raw.replace("\\u202e", "\u202e").replace("\\u202c", "\u202c")
    assert hidden(raw)
    path = tmp_path / "p.policy"
    path.write_text(raw, encoding="utf-8")
    assert CliRunner().invoke(cli, ["fmt", str(path)]).exit_code == 0
    formatted = path.read_text(encoding="utf-8")
    assert hidden(formatted) == []
    assert formatted == ESCAPED
    # Same meaning: the escaped set compiles to the same values as the raw one.
    before = check_sources({"a.policy": raw}).model
    after = check_sources({"a.policy": formatted}).model
    assert before is not None and after is not None
    assert before.interceptors[0].rules == after.interceptors[0].rules
    for model in (before, after):
        assert re2.search(model.patterns["ZW"].source, "a\u200bb") is not None


def test_fmt_diff_prints_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "p.policy"
    messy = 'validator   v{on tools/call request\ndeny if $.name=="rm"   "no"}\n'
    path.write_text(messy, encoding="utf-8")
    result = CliRunner().invoke(cli, ["fmt", "--diff", str(path)])
    assert '+  deny if $.name == "rm" "no"' in result.output
    assert path.read_text(encoding="utf-8") == messy


TROJAN_COMMENT = (
    "validator v {\n"
    "  on tools/call request\n"
    '  deny if $.name == "rm" "no"  # admin only\u202e \u2066// skip\u2069\n'
    '  deny if $.name == "a\u200bb" "zero width"\n'
    "}\n"
)


def test_check_warns_at_each_hidden_character_with_a_caret_and_help(tmp_path: Path) -> None:
    path = tmp_path / "p.policy"
    path.write_text(TROJAN_COMMENT, encoding="utf-8")
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 0  # a warning; `--strict` makes it fail
    out = result.output
    assert f"{path}:3:44: warning[W310]: hidden bidirectional control U+202E" in out
    assert f"{path}:4:23: warning[W310]: hidden invisible or control character U+200B" in out
    assert "Trojan Source" in out and "`\\u200b`" in out
    # The quote shows the characters as escapes, with the caret under the first one.
    quote = '3 |   deny if $.name == "rm" "no"  # admin only\\u{202E} \\u{2066}// skip\\u{2069}'
    assert quote in out
    lines = out.splitlines()
    caret = lines[lines.index(quote) + 1]
    assert caret.index("^") == quote.index("\\u{202E}") and caret.count("^") == len("\\u{202E}")
    assert hidden(out) == []
    strict = CliRunner().invoke(cli, ["check", "--strict", str(path)])
    assert strict.exit_code == 1


HOSTILE = "search\n::error file=main.py,line=1::pwned\u202e"


@pytest.mark.parametrize("output_format", ["text", "github", "json", "sarif"])
def test_names_from_a_tools_snapshot_cannot_inject_lines(
    tmp_path: Path, output_format: str
) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps({"tools": [{"name": HOSTILE, "inputSchema": {}}]}))
    policy = tmp_path / "p.policy"
    policy.write_text('validator v {\n  on tools/call request\n  deny if $.name == "serch"\n}\n')
    result = CliRunner().invoke(
        cli, ["check", "--tools", str(tools), "--format", output_format, str(policy)]
    )
    assert "W102" in result.output
    assert not any(line.startswith("::error") for line in result.output.splitlines())
    assert hidden(result.output) == []
    if output_format == "github":
        [annotation] = [line for line in result.output.splitlines() if line.startswith("::")]
        assert annotation.startswith("::warning file=")
    if output_format in ("json", "sarif"):
        text = json.dumps(json.loads(result.output), ensure_ascii=False)
        assert "\\n::error" not in text and "\u202e" not in text

"""A recorded payload is attacker-written: printing it must not drive the terminal or CI.

`replay --show-values` prints payload strings; a newline there would start a
GitHub workflow command of its own, a U+202E would reorder the line a
reviewer reads. Every format prints them as escapes.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
from click.testing import CliRunner

from policy_engine.cli.main import cli

HOSTILE = "x\n::error file=a.py,line=1::pwned \u202eevil\u2066"
POLICY = 'validator v {\n  on tools/call request\n  deny if $.arguments.q == "block" "no"\n}\n'


def raw_hidden(text: str) -> list[str]:
    odd = {"Cc", "Cf", "Zl", "Zp"}
    return [f"U+{ord(c):04X}" for c in text if c != "\n" and unicodedata.category(c) in odd]


@pytest.mark.parametrize("output_format", ["text", "github", "markdown", "json"])
def test_replayed_payloads_print_hidden_characters_as_escapes(
    tmp_path: Path, output_format: str
) -> None:
    (tmp_path / "p.policy").write_text(POLICY, encoding="utf-8")
    record = {
        "v": 1,
        "event": "tools/call",
        "phase": "request",
        "side": "sending",
        "decision": "deny",
        "payload": {"name": "t", "arguments": {"q": HOSTILE}},
    }
    traffic = tmp_path / "traffic.jsonl"
    traffic.write_text(json.dumps(record) + "\n", encoding="utf-8")
    args = ["replay", str(tmp_path), "--traffic", str(traffic), "--show-values"]
    result = CliRunner().invoke(cli, [*args, "--format", output_format])
    assert result.exit_code == 1  # recorded deny, allowed now
    assert not any(line.startswith("::error") for line in result.output.splitlines())
    assert raw_hidden(result.output) == []
    if output_format in ("text", "json"):
        assert "pwned" in result.output  # shown, escaped, not dropped

"""docs/reviewing.md cannot drift: every `$ policyc ...` block is run and compared."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from policy_engine.cli.main import cli

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "reviewing.md"
BLOCK = re.compile(r"^````console\n\$ policyc (.+?)\n(.*?)^````$", re.M | re.S)
BLOCKS = BLOCK.findall(DOC.read_text(encoding="utf-8"))
DURATION = re.compile(r"in \d+\.\d+s")


def steady(text: str) -> str:
    """Durations are the one thing that may differ from run to run."""
    return DURATION.sub("in 0.00s", text.rstrip("\n"))


def test_the_page_has_its_examples() -> None:
    commands = [command.split()[0] for command, _ in BLOCKS]
    assert {"check", "test", "diff", "replay", "analyze"} <= set(commands)


@pytest.mark.parametrize(("command", "expected"), BLOCKS, ids=[c for c, _ in BLOCKS])
def test_documented_output_is_what_the_command_prints(
    command: str, expected: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    result = CliRunner().invoke(cli, shlex.split(command))
    assert steady(result.output) == steady(expected)


def test_the_page_shows_a_loosening_that_edits_no_rule_caught_by_diff() -> None:
    """The example pull request edits only params and a pattern; `diff` must still call it."""
    example = "diff docs/examples/loosening"
    [output] = [out for command, out in BLOCKS if command.startswith(example)]
    assert "param changed" in output and "pattern changed" in output
    assert output.count("blocked before, allowed now") == 3
    old = (REPO / "docs/examples/loosening/old/egress.policy").read_text(encoding="utf-8")
    new = (REPO / "docs/examples/loosening/new/egress.policy").read_text(encoding="utf-8")
    rules = [line for line in old.splitlines() if line.strip().startswith("deny")]
    assert rules == [line for line in new.splitlines() if line.strip().startswith("deny")]

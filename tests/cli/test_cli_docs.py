"""docs/cli.md is what scripts/gen_cli_docs.py renders from the click definitions today."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
import pytest

from policy_engine.cli.main import cli

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "cli.md"


def test_cli_reference_is_up_to_date() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gen_cli_docs.py"), "--check"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_command_and_option_is_documented() -> None:
    text = PAGE.read_text(encoding="utf-8")
    root = click.Context(cli, info_name="policyc")
    for name in cli.list_commands(root):
        command = cli.get_command(root, name)
        assert command is not None
        assert f"\n## policyc {name}\n" in text
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                for flag in param.opts:
                    assert f"`{flag}" in text or f", {flag}" in text, (name, flag)

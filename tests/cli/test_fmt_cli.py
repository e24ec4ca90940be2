"""`policyc fmt`: rewrite in place, or `--check` with a diff and exit 1."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from policy_engine.cli.main import cli

MESSY = 'validator   v{on tools/call request   # hook\ndeny if $.name=="rm"   "no"}\n'
CLEAN = 'validator v {\n  on tools/call request  # hook\n  deny if $.name == "rm" "no"\n}\n'


def test_check_reports_and_changes_nothing(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "v.policy"
    path.write_text(MESSY)
    result = runner.invoke(cli, ["fmt", "--check", str(tmp_path)])
    assert result.exit_code == 1
    assert f"would reformat {path}" in result.output
    assert '+  deny if $.name == "rm" "no"' in result.output
    assert path.read_text() == MESSY


def test_fmt_rewrites_then_check_is_clean(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "v.policy"
    path.write_text(MESSY)
    assert runner.invoke(cli, ["fmt", str(path)]).exit_code == 0
    assert path.read_text() == CLEAN
    again = runner.invoke(cli, ["fmt", "--check", str(path)])
    assert again.exit_code == 0
    assert again.output == ""


def test_shipped_policies_are_formatted(runner: CliRunner, policies: Path) -> None:
    result = runner.invoke(cli, ["fmt", "--check", str(policies)])
    assert result.exit_code == 0, result.output


def test_a_file_that_does_not_parse_is_left_alone(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "bad.policy"
    path.write_text("validator v {\n")
    result = runner.invoke(cli, ["fmt", str(path)])
    assert result.exit_code == 1
    assert "error[E003]" in result.output
    assert path.read_text() == "validator v {\n"

"""`policyc test`: pytest-like output, failures with payload diffs, coverage."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from policy_engine.cli.main import cli

GUARD = """
validator guard {
  on tools/call request
  deny if $.name == "rm" "no rm" code no-rm
  warn if $.name == "ls" "ls is noisy" code noisy-ls
}

mutator tidy {
  on tools/call request
  remove $.arguments.debug
}
"""


def _write(tmp_path: Path, tests: str) -> Path:
    (tmp_path / "guard.policy").write_text(GUARD)
    (tmp_path / "guard_test.policy").write_text(tests)
    return tmp_path


def test_shipped_policies_pass(runner: CliRunner, policies: Path) -> None:
    result = runner.invoke(cli, ["test", str(policies), "-v"])
    assert result.exit_code == 0, result.output
    assert "PASSED" in result.output and "FAILED" not in result.output
    assert (
        result.output.rstrip()
        .splitlines()[-1]
        .startswith(f"{result.output.count('PASSED')} passed, 0 failed")
    )


def test_a_failing_expectation_exits_1_with_a_diff(runner: CliRunner, tmp_path: Path) -> None:
    folder = _write(
        tmp_path,
        'test "debug removed" {\n'
        '  given tools/call request {"name": "x", "arguments": {"debug": 1, "q": 2}}\n'
        '  expect payload {"name": "x", "arguments": {"q": 3}}\n'
        "}\n",
    )
    result = runner.invoke(cli, ["test", str(folder)])
    assert result.exit_code == 1
    assert "guard_test.policy::debug removed FAILED" in result.output
    assert '-    "q": 3' in result.output and '+    "q": 2' in result.output
    assert "0 passed, 1 failed" in result.output


def test_decision_message_and_code_expectations(runner: CliRunner, tmp_path: Path) -> None:
    folder = _write(
        tmp_path,
        'test "rm denied" {\n  given tools/call request {"name": "rm"}\n  expect deny\n'
        '  expect message "no rm"\n  expect code no-rm\n}\n'
        'test "wrong code" {\n  given tools/call request {"name": "ls"}\n  expect allow\n'
        "  expect code no-rm\n}\n",
    )
    result = runner.invoke(cli, ["test", str(folder), "-v"])
    assert "guard_test.policy::rm denied PASSED" in result.output
    assert (
        "line 10: `expect code no-rm` failed: rule `no-rm` did not fire; got allow,"
        " fired: ['noisy-ls']" in result.output
    )
    assert result.exit_code == 1


def test_a_failure_names_the_expectation_and_what_it_got(runner: CliRunner, tmp_path: Path) -> None:
    folder = _write(
        tmp_path,
        'test "rm allowed" {\n  given tools/call request {"name": "rm"}\n  expect allow\n'
        '  expect no code no-rm\n  expect message "hello"\n}\n',
    )
    result = runner.invoke(cli, ["test", str(folder)])
    assert result.exit_code == 1
    lines = result.output.splitlines()
    start = lines.index(next(line for line in lines if line.startswith("___ rm allowed")))
    assert lines[start + 1 : start + 4] == [
        "line 3: `expect allow` failed: got deny by `guard` (no rm)",
        "line 4: `expect no code no-rm` failed: rule `no-rm` fired; got deny by `guard` (no rm)",
        "line 5: `expect message \"hello\"` failed: got messages ['no rm']",
    ]


def test_coverage_threshold(runner: CliRunner, tmp_path: Path) -> None:
    folder = _write(
        tmp_path,
        'test "rm denied" {\n  given tools/call request {"name": "rm"}\n  expect deny\n}\n',
    )
    result = runner.invoke(cli, ["test", str(folder), "--coverage", "--threshold", "50"])
    assert "guard.policy: 1/3 (33%)  missed lines: 5, 10" in result.output
    assert "total: 33.3%" in result.output
    assert result.exit_code == 1
    assert "below 50%" in result.output
    lower = runner.invoke(cli, ["test", str(folder), "--threshold", "30"])
    assert lower.exit_code == 0


def test_name_filter(runner: CliRunner, policies: Path) -> None:
    result = runner.invoke(cli, ["test", str(policies), "-k", "sampling: tools", "-v"])
    assert result.exit_code == 0
    assert result.output.count("PASSED") == 2


def test_no_tests_is_a_failure(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "guard.policy").write_text(GUARD)
    result = runner.invoke(cli, ["test", str(tmp_path)])
    assert result.exit_code == 1
    assert "no test blocks found" in result.output


def test_an_invalid_context_fails_its_test_without_a_traceback(
    runner: CliRunner, tmp_path: Path
) -> None:
    folder = _write(
        tmp_path,
        'test "no principal type" {\n  given tools/call request {"name": "rm"}\n'
        '  context {"principal": {"id": "intern"}}\n  expect deny\n}\n',
    )
    result = runner.invoke(cli, ["test", str(folder)])
    assert result.exit_code == 1
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert (
        "line 3: `context` is not an invocation context: `principal.type`: field required"
        in result.output
    )
    diffed = runner.invoke(cli, ["diff", str(folder), str(folder), "--budget", "5"])
    assert diffed.exit_code == 0, diffed.output

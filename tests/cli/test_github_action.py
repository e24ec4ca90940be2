"""The composite GitHub action (.github/actions/policyc): its shell steps, read from
action.yml with their inputs resolved as the runner would, run on a throwaway
repository with this checkout's policyc on PATH. The install step is left to CI (it
pip-installs the action's commit, as the pre-commit hook test does)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
ACTION = REPO / ".github" / "actions" / "policyc"
CLEAN = 'validator guard {\n  on tools/call request\n  deny tools ["shell_exec"] "no shell"\n}\n'
TESTS = """test "the shell is refused" {
  given tools/call request {"name": "shell_exec", "arguments": {}}
  only guard
  expect deny
}
"""
MESSY = CLEAN.replace("  on tools/call", "    on   tools/call")
BROKEN = CLEAN.replace('["shell_exec"]', '["shell_exec"')


def _steps(inputs: dict[str, str]) -> list[tuple[str, dict[str, str]]]:
    """The steps that would run: their command and environment, expressions resolved."""
    action = yaml.safe_load((ACTION / "action.yml").read_text(encoding="utf-8"))
    values = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    values.update(inputs)

    def resolve(text: str) -> str:
        return re.sub(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}", lambda m: values[m.group(1)], text)

    chosen = []
    for step in action["runs"]["steps"]:
        condition = step.get("if")
        if condition is not None:
            name, wanted = re.fullmatch(r"inputs\.([\w-]+) == '(\w+)'", condition).groups()
            if values[name] != wanted:
                continue
        if "run" in step:
            assert step["shell"] == "bash"
            env = {key: resolve(str(value)) for key, value in step.get("env", {}).items()}
            chosen.append((step["run"], env))
    return chosen


def _run_action(repo: Path, tmp_path: Path, **inputs: str) -> tuple[int, str]:
    shims = tmp_path / "bin"
    shims.mkdir(exist_ok=True)
    shim = shims / "policyc"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m policy_engine.cli.main "$@"\n')
    shim.chmod(0o755)
    output = []
    for command, env in _steps({"install": "false", **inputs}):
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=repo,
            env={
                **os.environ,
                **env,
                "PATH": f"{shims}{os.pathsep}{os.environ['PATH']}",
                "PYTHONPATH": str(REPO),
                "GITHUB_ACTION_PATH": str(ACTION),
            },
            capture_output=True,
            text=True,
            timeout=300,
        )
        output.append(done.stdout + done.stderr)
        if done.returncode != 0:
            return done.returncode, "".join(output)
    return 0, "".join(output)


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    repo = tmp_path / "repo"
    (repo / "policies").mkdir(parents=True)
    for name, text in files.items():
        (repo / "policies" / name).write_text(text)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def _sarif(path: Path) -> Any:
    report = json.loads(path.read_text(encoding="utf-8"))
    assert report["version"] == "2.1.0"
    return report["runs"][0]["results"]


def test_a_clean_repository_passes_with_an_empty_sarif_report(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"guard.policy": CLEAN, "guard_test.policy": TESTS})
    code, output = _run_action(repo, tmp_path, paths="policies")
    assert code == 0, output
    assert "check, fmt and tests passed" in output and "1 passed, 0 failed" in output
    assert _sarif(repo / "policyc.sarif") == []


def test_a_messy_file_fails_fmt_alone_and_the_report_says_which(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"guard.policy": MESSY, "guard_test.policy": TESTS})
    code, output = _run_action(repo, tmp_path, paths="policies", **{"sarif-file": "out.sarif"})
    assert code == 1
    assert "::error::policyc: fmt failed" in output
    assert _sarif(repo / "out.sarif") == []


def test_a_broken_file_fails_check_with_its_finding_in_the_sarif_report(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"guard.policy": BROKEN})
    code, output = _run_action(repo, tmp_path, paths="policies", **{"run-tests": "false"})
    assert code == 1
    assert "::error::policyc: check fmt failed" in output
    assert "::error file=" in output  # the same finding as a pull-request annotation
    (result,) = _sarif(repo / "policyc.sarif")
    location = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert location.endswith("guard.policy") and result["level"] == "error"

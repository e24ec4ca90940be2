"""The repository's `.pre-commit-hooks.yaml`, run by the real `pre-commit` on a
throwaway repository, as a user's `.pre-commit-config.yaml` would run it.

The config names this repository at its committed HEAD (pre-commit installs a
hook repository from a commit), so every test shares one hook environment.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
CLEAN = 'validator guard {\n  on tools/call request\n  deny tools ["shell_exec"]\n}\n'
MESSY = 'validator guard {\n    on   tools/call request\n  deny tools ["shell_exec"]\n}\n'
BROKEN = 'validator guard {\n  on tools/call request\n  deny tools ["shell_exec"\n}\n'


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """One pre-commit home for the module: the hook's environment is built once."""
    home = tmp_path_factory.mktemp("pre-commit-home")
    identity = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    return {**os.environ, **identity, "PRE_COMMIT_HOME": str(home)}


def _config() -> str:
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.strip()
    hooks = "\n".join(f"      - id: {hook}" for hook in ("policyc-check", "policyc-fmt"))
    return f"repos:\n  - repo: {REPO}\n    rev: {head}\n    hooks:\n{hooks}\n"


def _repo(tmp_path: Path, files: dict[str, str], env: dict[str, str]) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, env=env)
    files = {**files, ".pre-commit-config.yaml": _config()}
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    subprocess.run(["git", "add", "."], cwd=tmp_path, check=True, env=env)
    return tmp_path


def _hook(repo: Path, hook: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pre_commit", "run", hook, "--all-files"]
    return subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, timeout=540)


def test_fmt_hook_fails_on_a_file_out_of_layout_and_passes_on_a_clean_one(
    tmp_path: Path, env: dict[str, str]
) -> None:
    messy = _hook(_repo(tmp_path / "messy", {"guard.policy": MESSY}, env), "policyc-fmt", env)
    assert messy.returncode == 1, messy.stdout + messy.stderr
    assert "guard.policy" in messy.stdout
    clean = _hook(_repo(tmp_path / "clean", {"guard.policy": CLEAN}, env), "policyc-fmt", env)
    assert clean.returncode == 0, clean.stdout + clean.stderr


def test_check_hook_fails_with_a_located_error_and_passes_a_clean_set(
    tmp_path: Path, env: dict[str, str]
) -> None:
    broken = _repo(tmp_path / "broken", {"guard.policy": BROKEN}, env)
    failed = _hook(broken, "policyc-check", env)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "guard.policy:3:" in failed.stdout
    clean = _hook(_repo(tmp_path / "clean", {"guard.policy": CLEAN}, env), "policyc-check", env)
    assert clean.returncode == 0, clean.stdout + clean.stderr

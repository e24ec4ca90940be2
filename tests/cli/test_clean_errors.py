"""Inputs that used to end in a traceback now end in a message that names the file.

Real processes: `policyc` runs as a subprocess, so what is checked is exactly
what a user sees on the terminal.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
POLICY = 'validator v {\n  on tools/call request\n  deny if $.name == "café" "blocked"\n}\n'


def _policyc(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "policy_engine.cli.main", *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=120,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )


@pytest.mark.parametrize(
    ("encoding", "said"),
    [("latin-1", "is not UTF-8 (byte 0xe9 at offset 62)"), ("utf-16", "UTF-16 byte-order mark")],
)
@pytest.mark.parametrize("command", ["check", "eval", "test", "fmt"])
def test_a_file_that_is_not_utf8_is_named(
    tmp_path: Path, encoding: str, said: str, command: str
) -> None:
    path = tmp_path / "legacy.policy"
    path.write_bytes(POLICY.encode(encoding))
    extra = ["--event", "tools/call", "--phase", "request"] if command == "eval" else []
    done = _policyc(command, str(path), *extra)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "Traceback" not in output
    assert f"error[E011]: policy file `{path}` " in output
    assert said in output


def test_broken_symlinks_in_the_policy_folder_are_named(tmp_path: Path) -> None:
    (tmp_path / "good.policy").write_text(POLICY, encoding="utf-8")
    (tmp_path / "dangling.policy").symlink_to(tmp_path / "gone.policy")
    (tmp_path / "loop-a.policy").symlink_to(tmp_path / "loop-b.policy")
    (tmp_path / "loop-b.policy").symlink_to(tmp_path / "loop-a.policy")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "up").symlink_to(tmp_path)  # a directory loop
    done = _policyc("check", str(tmp_path))
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "Traceback" not in output
    dangling = tmp_path / "dangling.policy"
    assert f"`{dangling}`: it is a symlink to a file that does not exist" in output
    assert f"`{tmp_path / 'loop-a.policy'}`: it is a symlink loop" in output
    assert "4 file(s) checked: 3 error(s)" in output


def test_eval_refuses_a_payload_with_a_lone_surrogate_cleanly(tmp_path: Path) -> None:
    path = tmp_path / "ok.policy"
    path.write_text(POLICY, encoding="utf-8")
    payload = '{"name": "x", "arguments": {"k": "\\udfff"}}'
    args = ["eval", str(path), "--event", "tools/call", "--phase", "request", "--payload", "-"]
    done = _policyc(*args, stdin=payload)
    assert done.returncode == 2, done.stderr
    assert "not valid Unicode" in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""

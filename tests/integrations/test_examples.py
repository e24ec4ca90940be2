"""Each in-code integration example runs on its own, says what happened and exits 0."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("policy_server.py", ["echo -> hello", "shell_exec -> blocked", "[SECRET:GITHUB_TOKEN]"]),
        ("fastmcp_server.py", ["echo -> hello", "shell_exec -> blocked", "[SECRET:GITHUB_TOKEN]"]),
        ("policy_client.py", ["shell_exec -> blocked in the client by tool-guard", "search_docs"]),
    ],
)
def test_example_runs(name: str, expected: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, f"examples/{name}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    for line in expected:
        assert line in done.stdout
    assert "debug_dump" not in done.stdout

"""The README's first command: the gateway demo, run as a user runs it."""

from __future__ import annotations

import subprocess
import sys

import pytest
from gateway_harness import ROOT

pytestmark = pytest.mark.e2e


def test_demo_shows_filter_block_and_redaction() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "demo.py")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=str(ROOT),
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    listing = out.split("== tools/list")[1].split("->")[0]
    assert "search_docs" in listing and "debug_dump" not in listing
    assert "hide-debug-tools: this tool is hidden by policy" in out
    assert "tool-guard: tool is blocked by policy" in out
    assert "ann.lee@example.com" not in out and "[REDACTED:EMAIL]" in out
    assert "3 pages match 'holidays'" in out
    assert "Traceback" not in done.stderr

"""Starting and stopping a real `policyc playground` process for the tests."""

from __future__ import annotations

import select
import subprocess
import sys

START_TIMEOUT_S = 60


def start_playground(*args: str) -> tuple[subprocess.Popen[str], str]:
    """A real `policyc playground` process on a free loopback port, and its base URL."""
    command = [sys.executable, "-m", "policy_engine.cli.main", "playground", "--port", "0", *args]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], START_TIMEOUT_S)
    line = process.stdout.readline() if ready else ""
    if "http://" not in line:
        process.kill()
        raise AssertionError(f"playground did not start: {line}{process.communicate()[1]}")
    return process, "http://" + line.split("http://", 1)[1].split()[0].rstrip("/")


def stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()

"""A server under test cannot make `policyc conformance` hold its whole stderr (issue 33).

1.5 GB of stderr cost 3.18 GB of memory when the runner quoted its tail.
Here the server writes 800 MB and exits; the runner, under a 1.5 GiB address
space limit, must still report the error quoting the end of its stderr.
"""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
ADDRESS_SPACE = 1536 * 1024 * 1024
NOISY = """\
import sys
for _ in range(800):
    sys.stderr.write("x" * (1 << 20) + "\\n")
sys.exit("the end")
"""


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def test_a_flood_of_stderr_is_quoted_from_its_tail(tmp_path: Path) -> None:
    script = tmp_path / "noisy.py"
    script.write_text(NOISY, encoding="utf-8")
    server = f"{sys.executable} {script}"
    command = [sys.executable, "-m", "policy_engine.cli.main", "conformance", "--server", server]
    done = subprocess.run(
        [*command, "--fixture", "protocol/list-all"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=_limit_memory,
        check=False,
    )
    assert done.returncode == 1, done.stderr[-2000:]
    assert "ERROR       protocol/list-all" in done.stdout
    assert "its stderr ends:" in done.stdout and "the end" in done.stdout
    assert "MemoryError" not in done.stdout + done.stderr

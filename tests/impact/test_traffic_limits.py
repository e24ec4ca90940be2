"""A traffic file cannot make `replay` hold a whole giant line in memory (issue 33).

A 1 GB line used 2.16 GB before the 64 MiB limit was checked. Here a 4 GiB
line (a sparse file: no disk is used) is replayed under a 1.5 GiB address
space limit: it must be refused by line number, not end in a MemoryError.
"""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

SETS = Path(__file__).parent / "sets"
ADDRESS_SPACE = 1536 * 1024 * 1024


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def test_a_giant_line_is_refused_without_reading_it_whole(tmp_path: Path) -> None:
    traffic = tmp_path / "t.jsonl"
    with traffic.open("wb") as handle:
        handle.truncate(4 * 1024 * 1024 * 1024)  # one 4 GiB line of NUL bytes, sparse
    command = [sys.executable, "-m", "policy_engine.cli.main", "replay", str(SETS / "base")]
    done = subprocess.run(
        [*command, "--traffic", str(traffic)],
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=_limit_memory,
        check=False,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert "t.jsonl:1: line is over 67108864 bytes" in done.stderr
    assert "Traceback" not in done.stderr

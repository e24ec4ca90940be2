"""`policyc serve` start-up errors are one line for the operator, never a traceback.

Cases in ``cases/serve_errors.json``: the arguments after the policy folder and
a part of the message. ``BUSY_PORT`` is a port another socket listens on;
``TMP_DIR`` is a fresh folder.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
CASES: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "cases" / "serve_errors.json").read_text(encoding="utf-8")
)


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_serve_start_up_error(case: dict[str, Any], tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        args = [
            str(arg).replace("BUSY_PORT", port).replace("TMP_DIR", str(tmp_path))
            for arg in case["args"]
        ]
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "policy_engine.cli.main",
                "serve",
                str(REPO / "policies"),
                *args,
            ],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 2, done.stderr
    assert case["stderr"] in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr

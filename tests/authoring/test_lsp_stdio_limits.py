"""`policyc lsp` survives a hostile byte stream on stdin (issue 33).

A declared `Content-Length` of 10^17 was read with one `read(n)`: a
MemoryError that ended the server with a traceback.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.e2e


def _frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _serve(stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "policy_engine.cli.main", "lsp"],
        input=stdin,
        capture_output=True,
        timeout=120,
        check=False,
    )


def test_a_huge_content_length_does_not_crash_the_server() -> None:
    done = _serve(b"Content-Length: 99999999999999999\r\n\r\n" + b"x" * 100_000)
    assert done.returncode == 0, done.stderr[-2000:]
    assert b"MemoryError" not in done.stderr and b"Traceback" not in done.stderr


def test_a_body_under_the_cap_is_still_answered() -> None:
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
    shutdown = {"jsonrpc": "2.0", "id": 2, "method": "shutdown"}
    done = _serve(
        _frame(initialize) + _frame(shutdown) + _frame({"jsonrpc": "2.0", "method": "exit"})
    )
    assert b'"id": 1' in done.stdout and b'"capabilities"' in done.stdout, done.stdout[:500]

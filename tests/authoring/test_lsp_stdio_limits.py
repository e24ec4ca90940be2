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


def _messages(stream: bytes) -> list[dict[str, object]]:
    found = []
    while stream:
        header, _, rest = stream.partition(b"\r\n\r\n")
        length = int(header.split(b"Content-Length: ")[1].split(b"\r\n")[0])
        found.append(json.loads(rest[:length]))
        stream = rest[length:]
    return found


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


def test_a_request_with_invalid_params_gets_an_error_reply() -> None:
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
    hover = {"jsonrpc": "2.0", "id": 5, "method": "textDocument/hover", "params": {"SECRET": 1}}
    shutdown = {"jsonrpc": "2.0", "id": 2, "method": "shutdown"}
    stream = b"".join(
        _frame(m) for m in (initialize, hover, shutdown, {"jsonrpc": "2.0", "method": "exit"})
    )
    done = _serve(stream)
    replies = _messages(done.stdout)
    (refused,) = [r for r in replies if r.get("id") == 5]
    assert refused["error"]["code"] == -32602
    assert refused["error"]["data"] == {"method": "textDocument/hover"}
    assert "SECRET" not in json.dumps(refused)

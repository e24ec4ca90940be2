"""Small things a client can do to the HTTP gateway, and what it and the operator see."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from balancer import FLOW_KEY
from gateway_harness import ROOT, free_port, gateway_argv, recorder, text_of, wait_for_port
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

pytestmark = pytest.mark.e2e

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


@contextmanager
def logged_gateway(tmp_path: Path, *args: str) -> Iterator[tuple[str, Path]]:
    """An HTTP gateway whose stderr (its log) is kept in a file; yields its URL and log."""
    port, stderr = free_port(), tmp_path / "gateway.err"
    argv = gateway_argv("--http", f"127.0.0.1:{port}", *args, policies=[])
    with stderr.open("wb") as err:
        process = subprocess.Popen(
            [sys.executable, *argv],
            cwd=str(ROOT),
            env={**os.environ, "FLOW_KEY": FLOW_KEY},
            stderr=err,
        )
        try:
            wait_for_port(port, process)
            yield f"http://127.0.0.1:{port}/mcp", stderr
        finally:
            process.terminate()
            process.wait(10)


@pytest.mark.parametrize("stateless", [False, True], ids=["sessions", "stateless"])
async def test_a_non_ascii_session_id_is_not_found(tmp_path: Path, stateless: bool) -> None:
    extra = ("--stateless", "--flow-key-env", "FLOW_KEY") if stateless else ()
    backend = recorder(tmp_path / "calls.log")
    with logged_gateway(tmp_path, "--backend", backend, *extra) as (url, log):
        async with httpx2.AsyncClient(timeout=30) as http:
            for session_id in (b"\xc3\xa9t\xc3\xa9", b"a" * 32 + b".\xc3\xa9"):
                headers = {**HEADERS, "Mcp-Session-Id": session_id}  # type: ignore[dict-item]
                answer = await http.post(url, json=PING, headers=headers)
                assert answer.status_code in (400, 404)
    assert "Traceback" not in log.read_text()


async def test_a_client_that_leaves_is_one_log_line(tmp_path: Path) -> None:
    with logged_gateway(tmp_path, "--backend", recorder(tmp_path / "calls.log")) as (url, log):
        async with (
            httpx2.AsyncClient(timeout=30) as http,
            Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
        ):
            assert text_of(await client.call_tool("echo", {"text": "bye"})) == "bye"
        with anyio.fail_after(30):
            while "ended" not in log.read_text():
                await anyio.sleep(0.1)
    text = log.read_text()
    assert "Traceback" not in text
    assert [line for line in text.splitlines() if "session" in line.lower()] == [
        line for line in text.splitlines() if line.endswith("ended")
    ]


def test_a_remote_address_without_auth_names_the_gateways_flag(tmp_path: Path) -> None:
    argv = gateway_argv("--http", "0.0.0.0:0", "--backend", "x=true", policies=[])
    done = subprocess.run(
        [sys.executable, *argv], cwd=str(ROOT), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1
    assert "refusing to serve 0.0.0.0 without auth" in done.stderr
    assert "--auth-token-env" in done.stderr
    assert "--allow-unauthenticated-remote" not in done.stderr

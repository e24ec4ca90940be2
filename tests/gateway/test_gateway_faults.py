"""Faults on either side, each answered in bounded time: a backend that dies, hangs or
talks nonsense, and an interceptor server that goes away."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest
from gateway_harness import HERE, ROOT, SHIPPED, calls, local_client, recorder, text_of
from mcp.shared.exceptions import MCPError

pytestmark = pytest.mark.e2e

LIMIT = 30
TOOL_GUARD = ROOT / "policies" / "tool-guard.policy"
SERVE = [sys.executable, "-m", "policy_engine.cli.main", "serve"]


async def test_backend_killed_mid_call_is_restarted(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    with anyio.fail_after(LIMIT):
        # A backend timeout past the test's limit: a gateway that waited for it instead
        # of seeing the crash fails the test, however slow or loaded the machine.
        async with local_client(
            "--backend", recorder(log), "--backend-timeout", str(LIMIT * 4)
        ) as client:
            with pytest.raises(MCPError) as caught:
                await client.call_tool("crash", {})
            assert caught.value.code == -32603
            assert caught.value.data["server"] == "rec"
            # Restarted and re-initialized behind the client's back.
            assert text_of(await client.call_tool("echo", {"text": "again"})) == "again"
    assert [c["tool"] for c in calls(log)] == ["crash", "echo"]


async def test_backend_killed_with_exit_policy_stops_the_gateway(tmp_path: Path) -> None:
    with anyio.fail_after(LIMIT):
        async with local_client(
            "--backend", recorder(tmp_path / "calls.log"), "--on-backend-exit", "exit"
        ) as client:
            with pytest.raises(MCPError) as caught:
                await client.call_tool("crash", {})
            assert caught.value.code == -32603
            with pytest.raises(MCPError):
                await client.call_tool("echo", {"text": "gone"})


async def test_hanging_backend_times_out(tmp_path: Path) -> None:
    with anyio.fail_after(LIMIT):
        async with local_client(
            "--backend", recorder(tmp_path / "calls.log"), "--backend-timeout", "1"
        ) as client:
            started = time.monotonic()
            with pytest.raises(MCPError) as caught:
                await client.call_tool("hang", {})
            assert time.monotonic() - started > 0.9  # it waited for the timeout
            assert caught.value.code == -32001
            assert caught.value.data == {"server": "rec", "timeoutMs": 1000}
            assert text_of(await client.call_tool("echo", {"text": "alive"})) == "alive"


async def test_garbage_from_the_backend_is_a_clean_error() -> None:
    backend = f"junk={sys.executable} {HERE / 'garbage_backend.py'}"
    with anyio.fail_after(LIMIT):
        # No list filter: the call itself goes to the backend (with one, the gateway's
        # listing before it fails first: test_gateway_hidden.py).
        async with local_client(
            "--backend", backend, "--backend-timeout", "1", policies=SHIPPED
        ) as client:
            assert client.server_info is not None and client.server_info.name == "garbage"
            with pytest.raises(MCPError) as caught:
                await client.call_tool("anything", {})
    assert caught.value.code == -32001


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def interceptor_server(port: int) -> Iterator[subprocess.Popen[bytes]]:
    """``policyc serve`` over HTTP, as a remote interceptor server."""
    process = subprocess.Popen(
        [*SERVE, str(TOOL_GUARD), "--http", f"127.0.0.1:{port}"],
        cwd=str(ROOT),
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        yield process
    finally:
        process.kill()
        process.wait(10)


@pytest.mark.parametrize("fail_open", [False, True], ids=["fail-closed", "fail-open"])
async def test_interceptor_server_killed(tmp_path: Path, fail_open: bool) -> None:
    log = tmp_path / "calls.log"
    port = _free_port()
    config = tmp_path / "gateway.toml"
    config.write_text(
        f'interceptor_timeout_ms = 2000\n[[interceptors]]\nid = "guard"\nurl = "http://127.0.0.1:{port}/mcp"\n'
        + (
            "[overrides.tool-guard]\nfail_open = true\n"
            "[overrides.admin-only-tools]\nfail_open = true\n"
            if fail_open
            else ""
        )
    )
    with interceptor_server(port) as server, anyio.fail_after(LIMIT):
        async with local_client(
            "--config", str(config), "--backend", recorder(log), policies=[]
        ) as client:
            assert text_of(await client.call_tool("echo", {"text": "one"})) == "one"
            server.kill()
            server.wait(10)
            if fail_open:
                assert text_of(await client.call_tool("echo", {"text": "two"})) == "two"
            else:
                with pytest.raises(MCPError) as caught:
                    await client.call_tool("echo", {"text": "two"})
                assert caught.value.code == -32602
                failed = {e["interceptor"] for e in caught.value.data["validationErrors"]}
                assert failed == {"tool-guard", "admin-only-tools"}
            # Back up on the same port: reconnected before its next use.
            with interceptor_server(port):
                assert text_of(await client.call_tool("echo", {"text": "three"})) == "three"
                with pytest.raises(MCPError):
                    await client.call_tool("shell_exec", {"command": "ls"})
    expected = ["echo", "echo", "echo"] if fail_open else ["echo", "echo"]
    assert [c["tool"] for c in calls(log)] == expected


def test_a_backend_that_cannot_start_is_named() -> None:
    done = subprocess.run(
        [*SERVE[:-1], "gateway", str(TOOL_GUARD), "--backend", "ghost=/nonexistent/command"],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        cwd=str(ROOT),
    )
    assert done.returncode == 1
    assert "backend ghost could not be started: FileNotFoundError" in done.stderr
    assert "Traceback" not in done.stderr

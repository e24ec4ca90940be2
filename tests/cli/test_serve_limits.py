"""`policyc serve --http` bounds what a client holds: connections, time, sessions, bodies.

Real server processes on 127.0.0.1, raw sockets for the clients that misbehave
and httpx for the ones that do not. Refusals are logged once, not per client.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "limits", "version": "0"},
    },
}
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@dataclass
class Served:
    process: subprocess.Popen[str]
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def stop(self) -> str:
        """Stop the server; its whole stderr."""
        self.process.terminate()
        _, err = self.process.communicate(timeout=30)
        return err


@contextmanager
def serving(*args: str) -> Iterator[Served]:
    command = [sys.executable, "-m", "policy_engine.cli.main", "serve", str(REPO / "policies")]
    process = subprocess.Popen(
        [*command, "--http", "127.0.0.1:0", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = process.stderr.readline()
            found = re.search(r"serving on http://127\.0\.0\.1:(\d+)/mcp", line)
            if found:
                yield Served(process, int(found.group(1)))
                return
            if not line:
                break
        raise RuntimeError("server did not start")
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=30)


def _closed_by_server(sock: socket.socket, within: float) -> bool:
    sock.settimeout(within)
    try:
        return sock.recv(1) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def test_idle_and_slow_connections_are_closed_and_logged_once() -> None:
    with serving("--header-timeout", "0.5") as server, ExitStack() as stack:
        idle = [
            stack.enter_context(socket.create_connection(("127.0.0.1", server.port)))
            for _ in range(40)
        ]
        slow = stack.enter_context(socket.create_connection(("127.0.0.1", server.port)))
        slow.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never finishes its headers
        assert all(_closed_by_server(sock, 5) for sock in [*idle, slow])
        response = httpx2.post(server.url, json=INIT, headers=HEADERS, timeout=10)
        assert response.status_code == 200
        err = server.stop()
    assert err.count("closed a connection that sent no complete request in time") == 1
    assert "Traceback" not in err


def test_connections_past_the_cap_are_closed_at_once() -> None:
    with serving("--max-connections", "10") as server, ExitStack() as stack:
        held = [
            stack.enter_context(socket.create_connection(("127.0.0.1", server.port)))
            for _ in range(30)
        ]
        refused = sum(_closed_by_server(sock, 2) for sock in held)
        assert refused >= 20
        err = server.stop()
    assert err.count("refused a connection") == 1
    assert "--max-connections" in err


def test_a_body_that_never_arrives_gets_408_as_json_rpc() -> None:
    with serving("--body-timeout", "0.5") as server:
        with socket.create_connection(("127.0.0.1", server.port)) as sock:
            sock.sendall(
                b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b'Accept: application/json\r\nContent-Length: 100\r\n\r\n{"jsonrpc"'
            )
            sock.settimeout(10)
            reply = b""
            while b"\r\n\r\n" not in reply or not reply.rstrip().endswith(b"}"):
                chunk = sock.recv(4096)
                if not chunk:
                    break
                reply += chunk
        head, _, body = reply.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408")
        assert json.loads(body)["error"]["data"] == {"reason": "request body timed out"}
        server.stop()


def test_bodies_over_the_cap_get_json_rpc_413_and_honour_max_payload_bytes() -> None:
    body = json.dumps({**INIT, "params": {**INIT["params"], "pad": "x" * 80_000}}).encode()
    with serving("--max-payload-bytes", "1000") as server:
        response = httpx2.post(server.url, content=body, headers=HEADERS, timeout=10)
        assert response.status_code == 413
        assert response.json() == {
            "jsonrpc": "2.0",
            "id": INIT["id"],  # its own id, read from the body's first bytes
            "error": {
                "code": -32600,
                "message": "Invalid Request",
                "data": {"reason": "message too long", "maxBytes": 1000 + 64 * 1024},
            },
        }
        server.stop()
    with serving("--max-payload-bytes", "100000") as roomy:
        assert httpx2.post(roomy.url, content=body, headers=HEADERS, timeout=10).status_code == 200
        roomy.stop()


def test_host_names_are_compared_case_blind() -> None:
    with serving() as server:
        shouting = {**HEADERS, "host": f"LOCALHOST:{server.port}", "origin": "HTTP://LocalHost:1"}
        assert httpx2.post(server.url, json=INIT, headers=shouting, timeout=10).status_code == 200
        evil = {**HEADERS, "host": "EVIL.example"}
        assert httpx2.post(server.url, json=INIT, headers=evil, timeout=10).status_code == 421
        server.stop()


def test_the_oldest_idle_session_makes_room_for_a_new_one() -> None:
    with serving("--max-sessions", "3") as server, httpx2.Client(timeout=10) as http:
        sessions = []
        for _ in range(5):  # abandoned initializes
            opened = http.post(server.url, json=INIT, headers=HEADERS)
            assert opened.status_code == 200
            sessions.append(opened.headers["mcp-session-id"])
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}

        def status(session: str) -> int:
            headers = {**HEADERS, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
            return http.post(server.url, json=ping, headers=headers).status_code

        assert [status(s) for s in sessions] == [404, 404, 200, 200, 200]
        err = server.stop()
    assert err.count("ended the session idle longest to make room") == 1


def test_garbage_requests_are_logged_once() -> None:
    with serving() as server:
        for _ in range(20):
            with socket.create_connection(("127.0.0.1", server.port)) as sock:
                sock.sendall(b"NOT HTTP AT ALL\r\n\r\n")
                sock.settimeout(5)
                while sock.recv(4096):  # a 400, then the server closes
                    pass
        assert httpx2.post(server.url, json=INIT, headers=HEADERS, timeout=10).status_code == 200
        err = server.stop()
    assert err.count("Invalid HTTP request received") == 1
    assert "Traceback" not in err

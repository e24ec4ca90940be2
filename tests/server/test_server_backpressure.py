"""stdio backpressure: a client that writes without reading fills the pipe, not the server.

The server reads at most ``max_in_flight`` requests ahead of the answers it
has handed to the writer; once the client stops reading, stdout fills, the
answers stop draining, and the server stops reading stdin. The client's
writes then block. Before this, the server read everything (100,000 unread
invokes grew it from 76 MB to over 700 MB).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
import pytest
from server_harness import FIXTURE, HERE, invoke_message, raw_stdio

pytestmark = pytest.mark.e2e

COUNT = 30_000
NOTE = "x" * 1000


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_unread_replies_stop_the_server_reading() -> None:
    process = subprocess.Popen(
        [sys.executable, str(FIXTURE)],
        cwd=str(HERE),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout
    try:
        handshake = {
            "jsonrpc": "2.0",
            "id": "init",
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "backpressure", "version": "0"},
            },
        }
        stdin.write(json.dumps(handshake).encode() + b"\n")
        stdin.flush()
        assert json.loads(stdout.readline())["id"] == "init"
        stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        stdin.flush()
        baseline = _rss_kib(process.pid)

        lines = [
            json.dumps(invoke_message(i, payload={"name": "t", "arguments": {"note": NOTE}}))
            for i in range(COUNT)
        ]
        written = 0

        def write_all() -> None:
            nonlocal written
            try:
                for line in lines:
                    stdin.write(line.encode() + b"\n")
                    written += 1
                stdin.flush()
            except (BrokenPipeError, ValueError):
                pass

        writer = threading.Thread(target=write_all, daemon=True)
        writer.start()
        time.sleep(5)  # the server would read everything in this time if nothing held it
        assert writer.is_alive(), "the server read every request without answers being read"
        assert written < 4000
        grown_mib = (_rss_kib(process.pid) - baseline) / 1024
        assert grown_mib < 40, f"server grew by {grown_mib:.0f} MiB with replies unread"

        ids = set()
        deadline = time.monotonic() + 120
        while len(ids) < COUNT and time.monotonic() < deadline:
            reply = json.loads(stdout.readline())
            assert "result" in reply, reply
            ids.add(reply["id"])
        assert ids == set(range(COUNT))  # every request answered once reading resumes
        writer.join(10)
    finally:
        process.kill()
        process.wait(10)
        stdin.close()
        stdout.close()


@pytest.mark.parametrize("lane", ["fast-lane", "sdk"])
async def test_cancellations_get_through_at_the_limit(lane: str) -> None:
    """At the in-flight limit requests wait, but notifications are still read.

    Four ``gate`` calls fill a limit of four; three more wait behind them.
    Cancelling a waiting one means it never runs; cancelling the four running
    ones makes room for the rest, and the ``release`` among them opens the gate.
    """
    args = ["--max-in-flight", "4"] + (["--no-fast-path"] if lane == "sdk" else [])
    with anyio.fail_after(60):
        async with raw_stdio(*args) as wire:
            await wire.handshake()
            for index in range(6):
                await wire.send(invoke_message(f"g{index}", name="gate"))
            await wire.send(invoke_message("release", name="release"))
            for request_id in ("g4", "g0", "g1", "g2", "g3"):
                await wire.send(
                    {
                        "jsonrpc": "2.0",
                        "method": "notifications/cancelled",
                        "params": {"requestId": request_id},
                    }
                )
            answered = {(await wire.receive())["id"] for _ in range(2)}
            assert answered == {"g5", "release"}
            await wire.send({"jsonrpc": "2.0", "id": "ping", "method": "ping"})
            assert await wire.receive() == {"jsonrpc": "2.0", "id": "ping", "result": {}}

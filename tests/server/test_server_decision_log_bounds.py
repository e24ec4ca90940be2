"""The decision log is bounded and never holds up an invoke.

Client-supplied fields are capped, the file rotates by size, a FIFO without a
reader neither hangs start-up nor blocks invokes, a stderr nobody drains
does not stall the server, dropped lines are counted into the log, and a
complete log fails closed when it cannot keep up.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
import pytest
from server_harness import FIXTURE, HERE, invoke, invoke_message, stdio_client

from policy_engine.server.decision_log import Decision, DecisionLog, DecisionLogSettings
from policy_engine.wire import InterceptorError

pytestmark = pytest.mark.e2e


def _decision(index: int = 0, **fields: object) -> Decision:
    values: dict[str, object] = {
        "interceptor": "allow-all",
        "event": "tools/call",
        "phase": "request",
        "outcome": "valid",
        "duration_ms": 0.1,
        "trace_id": f"trace-{index}",
    }
    values.update(fields)
    return Decision(**values)  # type: ignore[arg-type]


def _read_fifo_until_closed(
    fd: int, closing: threading.Thread, timeout: float = 10
) -> list[dict[str, object]]:
    """Every line written to the FIFO until its writer closed it (``closing`` ended)."""
    data = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            chunk = None
        if chunk:
            data += chunk
            continue
        if chunk == b"" and not closing.is_alive():
            break  # no writer any more, and nothing left to read
        time.sleep(0.01)
    closing.join(timeout=1)
    return [json.loads(line) for line in data.splitlines()]


async def test_client_fields_are_capped(tmp_path: Path) -> None:
    log = tmp_path / "decisions.jsonl"
    huge = "t" * 1_000_000
    context = {"traceId": huge, "sessionId": huge}
    with anyio.fail_after(30):
        async with stdio_client("--decision-log", str(log)) as client:
            await invoke(client, name="allow-all", context=context)
    (line,) = log.read_text().splitlines()
    assert len(line) < 1000
    entry = json.loads(line)
    assert entry["traceId"] == huge[:256]
    assert entry["truncated"] == ["traceId", "sessionId"]


def test_the_file_rotates_by_size(tmp_path: Path) -> None:
    path = tmp_path / "decisions.jsonl"
    log = DecisionLog(str(path), DecisionLogSettings(max_bytes=5000, backups=2))
    for index in range(300):
        log.record(_decision(index))
    log.close()
    kept = sorted(p.name for p in tmp_path.iterdir())
    assert kept == ["decisions.jsonl", "decisions.jsonl.1", "decisions.jsonl.2"]
    for name in kept:
        assert (tmp_path / name).stat().st_size < 5000 + 1000
    last = json.loads((tmp_path / "decisions.jsonl").read_text().splitlines()[-1])
    assert last["traceId"] == "trace-299"


def test_reopen_follows_an_external_rotation(tmp_path: Path) -> None:
    path = tmp_path / "decisions.jsonl"
    log = DecisionLog(str(path), DecisionLogSettings(max_bytes=None))
    log.record(_decision(1))
    deadline = time.monotonic() + 10
    while not path.read_text() and time.monotonic() < deadline:
        time.sleep(0.01)
    os.replace(path, tmp_path / "rotated.jsonl")  # what logrotate does before SIGHUP
    log.reopen()
    log.record(_decision(2))
    log.close()
    assert json.loads(path.read_text())["traceId"] == "trace-2"
    assert json.loads((tmp_path / "rotated.jsonl").read_text())["traceId"] == "trace-1"


def test_a_fifo_without_reader_blocks_nothing_and_drops_are_reported(tmp_path: Path) -> None:
    fifo = tmp_path / "decisions.fifo"
    os.mkfifo(fifo)
    started = time.monotonic()
    log = DecisionLog(str(fifo), DecisionLogSettings(queue_lines=5))
    for index in range(50):
        log.record(_decision(index))
    assert time.monotonic() - started < 5
    assert log.dropped >= 40
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        # Close while reading: every queued line and the drop count arrive
        # before the writer lets go of the FIFO, however loaded the machine.
        closing = threading.Thread(target=log.close)
        closing.start()
        lines = _read_fifo_until_closed(reader, closing)
    finally:
        os.close(reader)
    dropped = [line for line in lines if "dropped" in line]
    # The writer reports drops as it sees them: one line or several, adding up.
    assert dropped and sum(line["dropped"] for line in dropped) == log.dropped
    assert len(lines) - len(dropped) == 50 - log.dropped


def test_a_complete_log_fails_closed_when_full(tmp_path: Path) -> None:
    fifo = tmp_path / "decisions.fifo"
    os.mkfifo(fifo)
    log = DecisionLog(str(fifo), DecisionLogSettings(queue_lines=2, complete=True))
    with pytest.raises(InterceptorError) as caught:
        for index in range(20):
            log.record(_decision(index))
    assert caught.value.code == -32603
    assert caught.value.data == {
        "reason": "the decision log is full and a complete log is required"
    }
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        log.close()
    finally:
        os.close(reader)


def _serve_and_invoke(args: list[str], count: int, stderr: int) -> int:
    """Start the stdio fixture, handshake, then invoke ``count`` times one by one."""
    process = subprocess.Popen(
        [sys.executable, str(FIXTURE), *args],
        cwd=str(HERE),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
    )
    assert process.stdin is not None and process.stdout is not None
    answered = 0

    def talk() -> None:
        nonlocal answered
        assert process.stdin is not None and process.stdout is not None
        init = {
            "jsonrpc": "2.0",
            "id": "init",
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "log", "version": "0"},
            },
        }
        process.stdin.write(json.dumps(init).encode() + b"\n")
        process.stdin.flush()
        process.stdout.readline()
        process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        for index in range(count):
            process.stdin.write(json.dumps(invoke_message(index)).encode() + b"\n")
            process.stdin.flush()
            if "result" in json.loads(process.stdout.readline()):
                answered += 1

    worker = threading.Thread(target=talk, daemon=True)
    worker.start()
    worker.join(60)
    process.kill()
    process.wait(10)
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream is not None:
            stream.close()
    return answered


def test_start_up_with_a_fifo_nobody_reads(tmp_path: Path) -> None:
    fifo = tmp_path / "decisions.fifo"
    os.mkfifo(fifo)
    assert _serve_and_invoke(["--decision-log", str(fifo)], 20, subprocess.DEVNULL) == 20


def test_an_undrained_stderr_log_does_not_stall_invokes() -> None:
    # stderr is a pipe nobody reads: it fills after a few hundred lines.
    assert _serve_and_invoke(["--decision-log", "-"], 2000, subprocess.PIPE) == 2000


def test_c1_controls_and_line_separators_in_names_are_escaped(tmp_path: Path) -> None:
    """JSON escapes C0 controls and newlines, not the one-byte CSI (U+009B) or U+2028:
    a client-chosen name holding them could drive a terminal tailing the log."""
    path = tmp_path / "decisions.jsonl"
    log = DecisionLog(str(path))
    log.record(_decision(event="tools/call\x9b2J\u2028\x1b[31m\nforged"))
    log.close()
    raw = path.read_bytes()
    assert b"\xc2\x9b" not in raw and b"\xe2\x80\xa8" not in raw and b"\x1b" not in raw
    assert raw.count(b"\n") == 1
    assert json.loads(raw)["event"] == "tools/call\x9b2J\u2028\x1b[31m\nforged"

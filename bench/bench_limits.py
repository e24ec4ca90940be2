"""Resource bounds under hostile clients: memory and descriptors, not speed.

Two figures, each for the checkout under test (or another one given with
``--code PATH``, put first on ``PYTHONPATH`` for the server process, to
measure a baseline such as the commit before the hardening):

* **Unread invokes (stdio).** A client writes ``--invokes`` (100,000) small
  invokes and never reads a reply. Reported: the server's resident memory
  before and at its peak, and how many requests the client got written before
  its writes blocked (the server stopped reading).
* **Idle connections (HTTP).** ``--connections`` (1,000) TCP connections that
  send nothing. Reported: the descriptors the server holds two seconds after
  they opened, and again after the header timeout (10 s by default) has passed.

    python bench/bench_limits.py
    python bench/bench_limits.py --code /tmp/old --policies /tmp/old/policies  # baseline
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURE_DIR = REPO / "tests" / "server"


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _env(code: str | None) -> dict[str, str]:
    env = dict(os.environ)
    if code:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [code, env.get("PYTHONPATH")]))
    return env


def unread_invokes(count: int, code: str | None, settle: float) -> dict[str, float]:
    process = subprocess.Popen(
        [sys.executable, str(FIXTURE_DIR / "serve_fixture.py")],
        cwd=str(FIXTURE_DIR),
        env=_env(code),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    stdin = process.stdin
    init = {
        "jsonrpc": "2.0",
        "id": "init",
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        },
    }
    stdin.write(json.dumps(init).encode() + b"\n")
    stdin.flush()
    process.stdout.readline()
    stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    stdin.flush()
    time.sleep(0.5)
    baseline = _rss_mib(process.pid)
    lines = [
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": i,
                "method": "interceptor/invoke",
                "params": {
                    "name": "allow-all",
                    "event": "tools/call",
                    "phase": "request",
                    "payload": {"name": "echo", "arguments": {"note": "hello"}},
                },
            }
        ).encode()
        + b"\n"
        for i in range(count)
    ]
    written = 0

    def write() -> None:
        nonlocal written
        try:
            for line in lines:
                stdin.write(line)
                written += 1
            stdin.flush()
        except (BrokenPipeError, ValueError):
            pass

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    peak, still = baseline, 0.0
    while still < settle:  # until memory has not grown for `settle` seconds
        time.sleep(1)
        now = _rss_mib(process.pid)
        still = still + 1 if now <= peak else 0.0
        peak = max(peak, now)
    process.kill()
    process.wait(10)
    return {"baseline_mib": baseline, "peak_mib": peak, "written": written}


def idle_connections(count: int, code: str | None, policies: str) -> dict[str, float]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, count + 512)), hard))
    command = [sys.executable, "-m", "policy_engine.cli.main", "serve", policies]
    process = subprocess.Popen(
        [*command, "--http", "127.0.0.1:0"],
        cwd=code or str(REPO),  # `-m` imports from the working folder first
        env=_env(code),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    port = 0
    while not port:
        line = process.stderr.readline()
        if not line:
            raise RuntimeError("server did not start")
        found = re.search(r"127\.0\.0\.1:(\d+)/mcp", line)
        port = int(found.group(1)) if found else 0
    threading.Thread(target=process.stderr.read, daemon=True).start()  # keep stderr drained
    fds_before = len(os.listdir(f"/proc/{process.pid}/fd"))
    sockets = [socket.create_connection(("127.0.0.1", port)) for _ in range(count)]
    time.sleep(2)
    held = len(os.listdir(f"/proc/{process.pid}/fd")) - fds_before
    time.sleep(10)
    held_later = len(os.listdir(f"/proc/{process.pid}/fd")) - fds_before
    for sock in sockets:
        sock.close()
    process.kill()
    process.wait(10)
    return {"held_after_2s": held, "held_after_12s": held_later}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", help="a checkout whose policy_engine the servers run")
    parser.add_argument("--invokes", type=int, default=100_000)
    parser.add_argument("--connections", type=int, default=1000)
    parser.add_argument("--settle", type=float, default=10.0)
    parser.add_argument("--policies", default=str(REPO / "policies"))
    args = parser.parse_args()
    memory = unread_invokes(args.invokes, args.code, args.settle)
    print(
        f"| {args.invokes:,} unread invokes (stdio) | server RSS {memory['baseline_mib']:.0f} MiB "
        f"-> peak {memory['peak_mib']:.0f} MiB | requests written before the client blocked: "
        f"{int(memory['written']):,} |"
    )
    fds = idle_connections(args.connections, args.code, args.policies)
    print(
        f"| {args.connections:,} idle connections (HTTP) | descriptors held after 2 s: "
        f"{int(fds['held_after_2s'])} | after 12 s: {int(fds['held_after_12s'])} |"
    )


if __name__ == "__main__":
    main()

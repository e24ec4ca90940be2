"""Two `policyc serve` replicas share flow state through one real Redis: the taint
one records is enforced by the other; Redis down fails closed and recovers."""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import MCPError

from .conftest import RedisServer, free_port

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from server_harness import http_client, request

pytestmark = pytest.mark.e2e

GUARD = """\
validator cross-boundary-guard {
  on tools/call request
  on tools/call response
  server filesystem tools ["read_file", "write_file"]
  server database tools ["write_query"]
  deny flow AWS_ACCESS_KEY across servers "secret from {source} sent to `{server}`" code relaybleed
}
"""
KEY = "a-shared-fingerprint-key-for-tests"
SECRET = "AKIAIOSFODNN7EXAMPLE"
READY = re.compile(r"serving on (http://\S+/mcp)")


@contextmanager
def replica(policy: Path, redis_url: str) -> Iterator[str]:
    with served(policy, "--flow-store", redis_url) as url:
        yield url


@contextmanager
def served(policy: Path, *options: str) -> Iterator[str]:
    """`policyc serve` over streamable HTTP with the fleet key in FLOW_KEY: its URL."""
    process = subprocess.Popen(
        [
            sys.executable,
            *("-m", "policy_engine.cli.main", "serve", str(policy)),
            *("--http", "127.0.0.1:0", "--flow-key-env", "FLOW_KEY", *options),
        ],
        env={**os.environ, "FLOW_KEY": KEY},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    assert process.stderr is not None
    # A reader thread, not select(): a text stream buffers lines the fd no longer shows.
    threading.Thread(target=lambda: [lines.put(x) for x in process.stderr], daemon=True).start()  # type: ignore[union-attr]
    try:
        deadline = time.monotonic() + 30
        url = None
        while url is None:
            line = lines.get(timeout=max(0.01, deadline - time.monotonic()))
            found = READY.search(line)
            url = found.group(1) if found else None
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)
        process.stderr.close()


READ = {"name": "read_file", "arguments": {"path": "/app/.env"}}
RESULT = {"content": [{"type": "text", "text": f"KEY={SECRET}"}]}
WRITE = {"name": "write_query", "arguments": {"sql": f"insert '{SECRET}'"}}


async def invoke(url: str, phase: str, payload: dict[str, Any], session: str) -> dict[str, Any]:
    """One `interceptor/invoke` through the SDK client over streamable HTTP."""
    async with http_client(url) as client:
        return await request(
            client,
            "interceptor/invoke",
            {
                "name": "cross-boundary-guard",
                "event": "tools/call",
                "phase": phase,
                "payload": payload,
                "context": {"sessionId": session},
            },
        )


async def invoke_error(url: str, phase: str, payload: dict[str, Any], session: str) -> MCPError:
    """The JSON-RPC error an invoke must get (the client's task group may wrap it)."""
    try:
        await invoke(url, phase, payload, session)
    except MCPError as err:
        return err
    except BaseExceptionGroup as group:
        matched, _ = group.split(MCPError)
        if matched is not None:
            found = matched.exceptions[0]
            while isinstance(found, BaseExceptionGroup):
                found = found.exceptions[0]
            assert isinstance(found, MCPError)
            return found
        raise
    raise AssertionError("the invoke was answered; it must fail")


def write_guard(tmp_path: Path) -> Path:
    policy = tmp_path / "guard.policy"
    policy.write_text(GUARD)
    return policy


async def test_a_taint_recorded_by_one_replica_is_enforced_by_the_other(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    policy = write_guard(tmp_path)
    with replica(policy, redis_server.url) as first, replica(policy, redis_server.url) as second:
        with anyio.fail_after(60):
            assert (await invoke(first, "request", READ, "s1"))["valid"] is True
            assert (await invoke(first, "response", RESULT, "s1"))["valid"] is True
            blocked = await invoke(second, "request", WRITE, "s1")
            assert blocked["valid"] is False
            assert blocked["messages"][0]["message"].endswith("sent to `database`")
            assert SECRET not in str(blocked)  # the message names places, not the value
            # another session on the same replica never saw it
            assert (await invoke(second, "request", WRITE, "s2"))["valid"] is True


async def test_redis_down_fails_closed_and_recovers(tmp_path: Path) -> None:
    policy = write_guard(tmp_path)
    redis = RedisServer(free_port(), tmp_path)
    with replica(policy, redis.url) as url:
        with anyio.fail_after(60):
            error = await invoke_error(url, "request", READ, "s1")
            assert error.error.code == -32603
            assert "flow store unavailable" in str(error.error.data)
            redis.start()
            try:
                assert (await invoke(url, "request", READ, "s1"))["valid"] is True
                assert (await invoke(url, "response", RESULT, "s1"))["valid"] is True
                assert (await invoke(url, "request", WRITE, "s1"))["valid"] is False
            finally:
                redis.stop()

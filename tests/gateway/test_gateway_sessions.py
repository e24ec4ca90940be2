"""What one client can make the HTTP gateway hold: sessions, and the backends behind them."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import anyio
import httpx2
import pytest
from gateway_harness import RECORDER, local_http_gateway, text_of
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from policy_engine.gateway import ConfigError, load_config

pytestmark = pytest.mark.e2e

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "abandoner", "version": "1"},
    },
}


def counting_recorder(starts: Path, log: Path) -> str:
    """The recording backend, behind a shell that notes each start in ``starts``."""
    run = f"echo started >> {shlex.quote(str(starts))}; exec {sys.executable} {RECORDER} {log}"
    return f"rec=sh -c {shlex.quote(run)}"


def started(starts: Path) -> int:
    return len(starts.read_text().splitlines()) if starts.exists() else 0


async def abandon_handshake(http: httpx2.AsyncClient, url: str) -> httpx2.Response:
    """``initialize``, and never ``notifications/initialized``: what a hostile client sends."""
    return await http.post(url, json=INITIALIZE, headers=HEADERS)


async def echo_through(url: str, text: str) -> str:
    async with (
        httpx2.AsyncClient(timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
    ):
        return text_of(await client.call_tool("echo", {"text": text}))


async def test_abandoned_handshakes_start_no_backends_and_expire(tmp_path: Path) -> None:
    starts, log = tmp_path / "starts", tmp_path / "calls.log"
    args = ("--backend", counting_recorder(starts, log), "--max-sessions-per-client", "4")
    async with (
        local_http_gateway(*args, "--handshake-timeout", "1", policies=[]) as url,
        httpx2.AsyncClient(timeout=60) as http,
    ):
        abandoned = []
        for _ in range(4):
            answer = await abandon_handshake(http, url)
            assert answer.status_code == 200
            assert "serverInfo" in answer.text
            abandoned.append(answer.headers["mcp-session-id"])
        # One start taught the gateway the backend's handshake; the others cost none.
        assert started(starts) == 1
        refused = await abandon_handshake(http, url)
        assert refused.status_code == 429
        assert "too many sessions" in refused.text
        # The abandoned sessions are closed at the handshake deadline, and a client
        # that finishes its handshake gets in and gets its own backend.
        text = ""
        with anyio.fail_after(60):
            while not text:
                try:
                    text = await echo_through(url, "still served")
                except Exception:
                    await anyio.sleep(0.5)
        assert text == "still served"
        assert started(starts) == 2
        gone = await http.post(
            url,
            json={"jsonrpc": "2.0", "id": 2, "method": "ping"},
            headers={**HEADERS, "Mcp-Session-Id": abandoned[0]},
        )
        assert gone.status_code == 404


async def test_a_finished_handshake_gets_the_backend_it_was_promised(tmp_path: Path) -> None:
    """By default too, handshakes a client never finishes start no backends; one it
    finishes, answered from the cache, gets its own backend, which serves its calls."""
    starts, log = tmp_path / "starts", tmp_path / "calls.log"
    async with (
        local_http_gateway("--backend", counting_recorder(starts, log), policies=[]) as url,
        httpx2.AsyncClient(timeout=60) as http,
    ):
        for _ in range(3):
            assert (await abandon_handshake(http, url)).status_code == 200
        assert started(starts) == 1
        assert await echo_through(url, "first") == "first"
        assert await echo_through(url, "second") == "second"
        assert started(starts) == 3


def test_the_config_file_sets_the_session_limits(tmp_path: Path) -> None:
    config = tmp_path / "gateway.toml"
    config.write_text(
        '[http]\nlisten = "127.0.0.1:1"\nmax_sessions = 64\n'
        "max_sessions_per_client = 8\nhandshake_timeout_s = 2.5\n"
    )
    limits = load_config(config).sessions
    assert (limits.max_sessions, limits.per_client, limits.handshake_timeout_s) == (64, 8, 2.5)
    config.write_text('[http]\nlisten = "127.0.0.1:1"\nmax_sessions_per_client = 0\n')
    with pytest.raises(ConfigError, match=r":3: error: `max_sessions_per_client` must be"):
        load_config(config)

"""The gateway under an operator's signals: SIGHUP (logrotate) reopens its logs and
reloads its policies with `policyc serve`'s rules; it never kills it."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import httpx2
import pytest
from gateway_harness import ROOT, free_port, gateway_argv, recorder, text_of, wait_for_port
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

pytestmark = pytest.mark.e2e

LIMIT = 90
BLOCK_ECHO = """
validator no-echo-{word} "No echo of {word}" {{
  on tools/call request
  deny if $.name == "echo" and $.arguments.text == "{word}" "not {word}" code no-{word}
}}
"""


async def echo(url: str, text: str) -> str:
    async with (
        httpx2.AsyncClient(timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
    ):
        try:
            return text_of(await client.call_tool("echo", {"text": text}))
        except MCPError as err:
            return f"blocked: {err.error.message}"


async def until(url: str, text: str, expected: str) -> None:
    """Calls until the answer is ``expected`` (a reload takes effect asynchronously)."""
    answer = ""
    with anyio.fail_after(LIMIT):
        while answer != expected:
            answer = await echo(url, text)
            if answer != expected:
                await anyio.sleep(0.3)


@pytest.mark.parametrize("watch", [False, True], ids=["sighup", "watch"])
async def test_sighup_reopens_logs_and_reloads_by_serves_rules(tmp_path: Path, watch: bool) -> None:
    policies = tmp_path / "policies"
    policies.mkdir()
    policy = policies / "echo.policy"
    policy.write_text(BLOCK_ECHO.format(word="alpha"))
    log = tmp_path / "decisions.log"
    port = free_port()
    args = ["--http", f"127.0.0.1:{port}", "--backend", recorder(tmp_path / "calls.log")]
    args += ["--decision-log", str(log), *(["--watch"] if watch else [])]
    process = subprocess.Popen(
        [sys.executable, *gateway_argv(*args, policies=[policies])],
        cwd=str(ROOT),
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"

    def hup() -> None:
        if not watch:
            process.send_signal(signal.SIGHUP)

    try:
        wait_for_port(port, process)
        assert (await echo(url, "alpha")).startswith("blocked")
        # logrotate: move the log away, then SIGHUP; the gateway lives and writes anew.
        log.rename(tmp_path / "decisions.log.1")
        process.send_signal(signal.SIGHUP)
        await until(url, "beta", "beta")
        assert process.poll() is None
        with anyio.fail_after(LIMIT):
            while not log.exists() or not log.read_text():
                await anyio.sleep(0.1)
        assert json.loads(log.read_text().splitlines()[0])["event"] == "tools/call"
        # A set that adds a rule is taken.
        policy.write_text(BLOCK_ECHO.format(word="alpha") + BLOCK_ECHO.format(word="beta"))
        hup()
        await until(url, "beta", "blocked: Interceptor validation failed")
        # A set that would drop one is refused; one that does not compile too. Both keep
        # the last good set (alpha and beta still blocked).
        policy.write_text(BLOCK_ECHO.format(word="beta"))
        hup()
        await anyio.sleep(2)
        policy.write_text("validator broken {")
        hup()
        await anyio.sleep(2)
        assert (await echo(url, "alpha")).startswith("blocked")
        assert (await echo(url, "beta")).startswith("blocked")
        assert await echo(url, "gamma") == "gamma"
        assert process.poll() is None
    finally:
        process.terminate()
        process.wait(10)

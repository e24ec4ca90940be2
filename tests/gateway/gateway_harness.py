"""Starting the real gateway in front of real backends: ``policyc gateway`` in a
subprocess, or the same gateway built from the same command line in this process.

The in-process gateway (``local_client``, ``local_front_client``, ``local_http_gateway``)
is what ``policyc gateway ARGS`` serves, less the process around it: its options come
from the command's own parsing (``policy_engine.cli.gateway.configure``), its sessions
are the library's ``GatewaySession`` and HTTP front; the client is the SDK's, over
memory streams (stdio's place) or streamable HTTP on 127.0.0.1. It saves a Python
start-up per test. What only a process shows (stdio framing and line limits,
signals, exit codes, start-up errors) stays with the subprocess helpers.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
RECORDER = HERE / "recording_backend.py"
TEST_POLICIES = HERE / "policies" / "gateway_test.policy"
SHIPPED = [ROOT / "policies" / "tool-guard.policy", ROOT / "policies" / "pii.policy"]
EVERYTHING = (
    ROOT / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
)


def recorder(log: Path, name: str = "rec") -> str:
    return f"{name}={sys.executable} {RECORDER} {log}"


def gateway_argv(*args: str, policies: Sequence[Path] | None = None) -> list[str]:
    chosen = [*SHIPPED, TEST_POLICIES] if policies is None else list(policies)
    return ["-m", "policy_engine.cli.main", "gateway", *map(str, chosen), *args]


def stdio_gateway(*args: str, policies: Sequence[Path] | None = None) -> Any:
    params = StdioServerParameters(
        command=sys.executable, args=gateway_argv(*args, policies=policies), cwd=str(ROOT)
    )
    return stdio_client(params)


@asynccontextmanager
async def gateway_client(
    *args: str, policies: Sequence[Path] | None = None, **client_options: Any
) -> AsyncIterator[Client]:
    client_options.setdefault("mode", "legacy")
    async with Client(stdio_gateway(*args, policies=policies), **client_options) as client:
        yield client


def calls(log: Path) -> list[dict[str, Any]]:
    """What the recording backend actually ran."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line]


async def cancel_a_slow_call(client: Client) -> None:
    """Start the recorder's `slow` tool and cancel it once its first progress arrives."""
    first = anyio.Event()

    async def progress(value: float, total: float | None, message: str | None) -> None:
        first.set()

    async with anyio.create_task_group() as tg:

        async def call() -> None:
            await client.call_tool("slow", {"steps": 50}, progress_callback=progress)

        tg.start_soon(call)
        await first.wait()
        tg.cancel_scope.cancel()


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def everything(name: str = "ev") -> str:
    """The reference "everything" server from npm, over stdio."""
    return f"{name}=node {EVERYTHING} stdio"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[bytes], limit: float = 30) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"process exited with {process.returncode} before listening")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port}")


@contextmanager
def running(argv: list[str], port: int, env: dict[str, str] | None = None) -> Iterator[str]:
    """A process that serves streamable HTTP on ``port``; yields its /mcp URL."""
    process = subprocess.Popen(
        argv, cwd=str(ROOT), env={**os.environ, **(env or {})}, stderr=subprocess.DEVNULL
    )
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


@contextmanager
def http_gateway(*args: str, policies: Sequence[Path] | None = None) -> Iterator[str]:
    port = free_port()
    argv = [sys.executable, *gateway_argv("--http", f"127.0.0.1:{port}", *args, policies=policies)]
    with running(argv, port) as url:
        yield url


@asynccontextmanager
async def front_client(
    front: str, *args: str, policies: Sequence[Path] | None = None, **client_options: Any
) -> AsyncIterator[Client]:
    """An SDK client of a gateway whose front is ``stdio`` or ``http`` (127.0.0.1)."""
    if front == "stdio":
        async with gateway_client(*args, policies=policies, **client_options) as client:
            yield client
        return
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    client_options.setdefault("mode", "legacy")
    with http_gateway(*args, policies=policies) as url:
        async with (
            httpx2.AsyncClient(timeout=30) as http,
            Client(streamable_http_client(url, http_client=http), **client_options) as client,
        ):
            yield client


@contextmanager
def everything_http() -> Iterator[str]:
    port = free_port()
    with running(["node", str(EVERYTHING), "streamableHttp"], port, {"PORT": str(port)}) as url:
        yield url


async def raw_request(client: Client, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """A request the SDK has no method for (the SEP's), answered as a plain dict."""
    import mcp_types as types
    from pydantic import BaseModel, ConfigDict

    class Raw(BaseModel):
        model_config = ConfigDict(extra="allow")

    request = types.Request[dict[str, Any] | None, str](method=method, params=params)
    result = await client.session.send_request(request, Raw)
    return dict(result.model_extra or {})


def gateway_process_argv(*args: str, policies: Sequence[Path] | None = None) -> list[str]:
    return [sys.executable, *gateway_argv(*args, policies=policies)]


HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


class Wire:
    """Newline-delimited JSON-RPC over the gateway's pipes, below any SDK client."""

    def __init__(self, process: Process) -> None:
        self.process = process
        self.buffer = b""
        self.replies: dict[Any, dict[str, Any]] = {}

    async def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(line + b"\n")

    async def reply_to(self, request_id: Any) -> dict[str, Any]:
        """The answer to ``request_id``; answers to others are kept for later."""
        assert self.process.stdout is not None
        while request_id not in self.replies:
            while b"\n" not in self.buffer:
                self.buffer += await self.process.stdout.receive()
            line, _, self.buffer = self.buffer.partition(b"\n")
            message = json.loads(line)
            if "id" in message and "method" not in message:
                self.replies[message["id"]] = message
        return self.replies.pop(request_id)


@asynccontextmanager
async def local_gateway(
    *args: str, policies: Sequence[Path] | None = None
) -> AsyncIterator[tuple[Any, Any]]:
    """(options, decision observer) of ``policyc gateway ARGS``, built in this process;
    the decision log and the traffic record it opened are closed on the way out."""
    from policy_engine.cli.gateway import configure
    from policy_engine.cli.gateway import gateway as command
    from policy_engine.gateway.decision_log import observers

    argv = gateway_argv(*args, policies=policies)[3:]  # the command's own arguments
    with command.make_context("gateway", argv) as context:
        options, decisions, recorder = configure(**context.params)
    try:
        yield options, observers(decisions, recorder)
    finally:
        for opened in (decisions, recorder):
            if opened is not None:
                opened.close()


@asynccontextmanager
async def _local_stdio(options: Any, log: Any) -> AsyncIterator[Any]:
    """The stdio front's one session (``serve_stdio``), its pipes replaced by memory
    streams: the client's end of them, for the SDK ``Client`` as a transport."""
    import secrets

    from mcp.shared.message import SessionMessage

    from policy_engine.gateway import GatewaySession, open_interception
    from policy_engine.gateway.serve import session_options

    async with open_interception(options, log) as interception:
        inbound_send, inbound_receive = anyio.create_memory_object_stream[
            SessionMessage | Exception
        ](256)
        outbound_send, outbound_receive = anyio.create_memory_object_stream[
            SessionMessage | Exception
        ](256)
        session_id = f"stdio-{secrets.token_hex(8)}"
        session = GatewaySession(
            interception, session_options(options, interception, session_id), outbound_send
        )
        session.chain.principal = options.principal

        async def serve() -> None:
            async with outbound_send:  # the gateway gone: the client reads end of stream
                await session.run(inbound_receive)

        async with inbound_receive, outbound_receive, anyio.create_task_group() as tg:
            tg.start_soon(serve)
            try:
                yield outbound_receive, inbound_send
            finally:
                await inbound_send.aclose()  # stdin's end of file: the session ends


@asynccontextmanager
async def local_client(
    *args: str, policies: Sequence[Path] | None = None, **client_options: Any
) -> AsyncIterator[Client]:
    """``gateway_client``'s session, served by an in-process gateway."""
    client_options.setdefault("mode", "legacy")
    async with (
        local_gateway(*args, policies=policies) as (options, log),
        Client(_local_stdio(options, log), **client_options) as client,
    ):
        yield client


async def _wait_for_port_async(port: int, limit: float = 30) -> None:
    with anyio.fail_after(limit):
        while True:
            try:
                stream = await anyio.connect_tcp("127.0.0.1", port)
            except OSError:
                await anyio.sleep(0.02)
                continue
            await stream.aclose()
            return


@asynccontextmanager
async def local_http_gateway(
    *args: str, policies: Sequence[Path] | None = None
) -> AsyncIterator[str]:
    """``http_gateway``'s front, served by an in-process gateway; yields its /mcp URL."""
    from policy_engine.gateway import open_interception
    from policy_engine.gateway.http import serve_http

    port = free_port()
    listen = ("--http", f"127.0.0.1:{port}")
    async with (
        local_gateway(*listen, *args, policies=policies) as (options, log),
        open_interception(options, log) as interception,
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(serve_http, options, interception)
        await _wait_for_port_async(port)
        yield f"http://127.0.0.1:{port}/mcp"
        tg.cancel_scope.cancel()


@asynccontextmanager
async def local_front_client(
    front: str, *args: str, policies: Sequence[Path] | None = None, **client_options: Any
) -> AsyncIterator[Client]:
    """``front_client``'s session, served by an in-process gateway."""
    if front == "stdio":
        async with local_client(*args, policies=policies, **client_options) as client:
            yield client
        return
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    client_options.setdefault("mode", "legacy")
    async with (
        local_http_gateway(*args, policies=policies) as url,
        httpx2.AsyncClient(timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), **client_options) as client,
    ):
        yield client


@asynccontextmanager
async def within(seconds: float) -> AsyncIterator[None]:
    """``anyio.fail_after`` for an ``async with`` line beside an async helper."""
    with anyio.fail_after(seconds):
        yield


def policyc_gateway(
    *args: str, policies: Sequence[Path] | None = None, env: dict[str, str] | None = None
) -> Any:
    """``policyc gateway ARGS`` through the command's entry point (click's ``CliRunner``):
    its exit code and stderr, for the refusals decided before anything is served. Never
    for a gateway that would serve: stdio's front takes the process's own descriptors."""
    from click.testing import CliRunner

    from policy_engine.cli.main import cli

    argv = ["gateway", *gateway_argv(*args, policies=policies)[3:]]
    return CliRunner().invoke(cli, argv, env=env)

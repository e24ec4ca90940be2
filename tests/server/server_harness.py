"""Helpers shared by the server tests: start real server processes, talk MCP to them."""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
from anyio.abc import Process
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from pydantic import ConfigDict, TypeAdapter

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "serve_fixture.py"
REPO = HERE.parent.parent
START_TIMEOUT = 30.0


class _Params(types.RequestParams):
    model_config = ConfigDict(extra="allow")


class _Request(types.Request[_Params, str]):
    pass


_RAW = TypeAdapter(dict[str, Any])


def stdio_params(*args: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=[str(FIXTURE), *args],
        env={**os.environ, **(env or {})},
        cwd=str(HERE),
    )


def stdio_client(*args: str, mode: str = "auto") -> Client:
    return Client(stdio_params(*args), mode=mode)


async def raw_request(client: Client, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Send any request through the SDK client; the whole result as a plain dict."""
    request = _Request(method=method, params=_Params(**params))
    result: dict[str, Any] = await client.session.send_request(request, _RAW)
    return result


async def request(client: Client, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Like ``raw_request``, without the MCP envelope fields (``_meta``, ``resultType``)."""
    raw = await raw_request(client, method, params)
    return {k: v for k, v in raw.items() if k not in ("_meta", "resultType")}


async def invoke(client: Client, **params: Any) -> dict[str, Any]:
    params.setdefault("event", "tools/call")
    params.setdefault("phase", "request")
    params.setdefault("payload", {"name": "echo", "arguments": {"note": "hello"}})
    return await request(client, "interceptor/invoke", params)


async def list_interceptors(client: Client, event: str | None = None) -> list[dict[str, Any]]:
    params = {} if event is None else {"event": event}
    result = await request(client, "interceptors/list", params)
    return list(result["interceptors"])


def capability(client: Client) -> Any:
    caps = client.server_capabilities.model_dump(by_alias=True, exclude_none=True)
    return caps


def _read_line(stream: Any, deadline: float) -> str:
    selector = selectors.DefaultSelector()
    selector.register(stream, selectors.EVENT_READ)
    try:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not selector.select(remaining):
            raise TimeoutError("server printed nothing in time")
        line: str = stream.readline()
        return line
    finally:
        selector.close()


@dataclass
class HttpServer:
    """A ``serve_fixture.py --http`` process; ``url`` is its MCP endpoint."""

    process: subprocess.Popen[str]
    port: int
    extra: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def next_line(self, timeout: float = 10.0) -> str:
        assert self.process.stdout is not None
        line = _read_line(self.process.stdout, time.monotonic() + timeout)
        if not line:
            raise EOFError("server exited")
        return line.strip()


@contextmanager
def http_server(*args: str, env: dict[str, str] | None = None) -> Iterator[HttpServer]:
    """Start an HTTP fixture server and wait (bounded) for its READY line."""
    process = subprocess.Popen(
        [sys.executable, str(FIXTURE), "--http", *args],
        cwd=str(HERE),
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = _read_line(process.stdout, time.monotonic() + START_TIMEOUT)
        if not line.startswith("READY "):
            raise RuntimeError(f"server did not start: {line!r}")
        yield HttpServer(process, int(line.split()[1]))
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


@dataclass
class RawStdio:
    """Newline-delimited JSON over a server's pipes, below any SDK client."""

    process: Process
    buffer: bytes = b""

    async def send_line(self, line: str | bytes) -> None:
        data = line.encode() if isinstance(line, str) else line
        assert self.process.stdin is not None
        await self.process.stdin.send(data + b"\n")

    async def send(self, message: dict[str, Any]) -> None:
        await self.send_line(json.dumps(message))

    async def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        while b"\n" not in self.buffer:
            self.buffer += await self.process.stdout.receive()
        line, _, self.buffer = self.buffer.partition(b"\n")
        message: dict[str, Any] = json.loads(line)
        return message

    async def handshake(self) -> dict[str, Any]:
        await self.send(
            {
                "jsonrpc": "2.0",
                "id": "init",
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "raw-test", "version": "0"},
                },
            }
        )
        reply = await self.receive()
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply


@asynccontextmanager
async def raw_stdio(*args: str) -> AsyncIterator[RawStdio]:
    process = await anyio.open_process(
        [sys.executable, str(FIXTURE), *args], cwd=str(HERE), stderr=subprocess.DEVNULL
    )
    async with process:
        try:
            yield RawStdio(process)
        finally:
            if process.stdin is not None:
                await process.stdin.aclose()
            with anyio.move_on_after(5):
                await process.wait()
            if process.returncode is None:
                process.kill()


def invoke_message(request_id: int | str, **params: Any) -> dict[str, Any]:
    params.setdefault("name", "allow-all")
    params.setdefault("event", "tools/call")
    params.setdefault("phase", "request")
    params.setdefault("payload", {"name": "echo", "arguments": {"note": "hello"}})
    return {"jsonrpc": "2.0", "id": request_id, "method": "interceptor/invoke", "params": params}


@asynccontextmanager
async def http_client(
    url: str, mode: str = "auto", token: str | None = None
) -> AsyncIterator[Client]:
    """The SDK client over streamable HTTP, optionally with a bearer token."""
    headers = {"authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        yield client

"""Starting the bare SDK interceptor server (servers/bare_server.py) for chain tests."""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process

from policy_engine.chain import ServerSpec

BARE_SERVER = Path(__file__).resolve().parent / "servers" / "bare_server.py"


def interceptor(name: str, kind: str, behavior: str, **fields: Any) -> dict[str, Any]:
    """One ``--interceptor`` spec; hooked on ``tools/call`` at both phases by default."""
    return {"name": name, "type": kind, "behavior": behavior, "events": ["tools/call"], **fields}


def argv(name: str, *interceptors: dict[str, Any], minimal: bool = False) -> list[str]:
    args = [sys.executable, str(BARE_SERVER), "--name", name]
    for spec in interceptors:
        args += ["--interceptor", json.dumps(spec)]
    if minimal:
        args.append("--minimal-results")
    return args


def stdio_server(name: str, *interceptors: dict[str, Any], minimal: bool = False) -> ServerSpec:
    return ServerSpec(command=tuple(argv(name, *interceptors, minimal=minimal)), id=name)


def kill(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)


class HttpServer:
    """A bare server on 127.0.0.1 over streamable HTTP that tests can kill and restart."""

    def __init__(self, name: str, *interceptors: dict[str, Any]) -> None:
        self.name = name
        self.interceptors = interceptors
        self.port = 0
        self.process: Process | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    async def start(self) -> None:
        """Start on the same port as before (any free port the first time)."""
        process = await anyio.open_process(
            [*argv(self.name, *self.interceptors), "--http", str(self.port)]
        )
        assert process.stdout is not None
        line = b""
        with anyio.fail_after(20):
            while not line.endswith(b"\n"):
                line += await process.stdout.receive(1)
        word, port = line.decode().split()
        assert word == "READY"
        self.port = int(port)
        self.process = process

    async def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None:
            process.kill()
            with anyio.fail_after(10):
                await process.wait()
            await process.aclose()


@asynccontextmanager
async def http_server(name: str, *interceptors: dict[str, Any]) -> AsyncIterator[HttpServer]:
    server = HttpServer(name, *interceptors)
    await server.start()
    try:
        yield server
    finally:
        with anyio.CancelScope(shield=True):
            await server.stop()

"""Raw JSON-RPC lines to a server process's stdio: what a client without an SDK sees."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio

# The legacy (2025-11-25) handshake, as any client opens a stdio session.
HANDSHAKE: list[dict[str, Any]] = [
    {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]


async def exchange(
    argv: Sequence[str],
    messages: Sequence[dict[str, Any]],
    cwd: Path,
    limit: float = 60,
    handshake: bool = True,
) -> tuple[dict[Any, dict[str, Any]], str]:
    """Send the handshake (unless ``messages`` bring their own) and ``messages``;
    every answer by id, then the process's stderr."""
    lines = [*HANDSHAKE, *messages] if handshake else list(messages)
    wanted = {m["id"] for m in lines if "id" in m}
    answers: dict[Any, dict[str, Any]] = {}
    process = await anyio.open_process(list(argv), cwd=str(cwd), env=dict(os.environ))
    stderr = bytearray()
    try:
        assert process.stdin and process.stdout and process.stderr

        async def drain() -> None:
            assert process.stderr is not None
            async for chunk in process.stderr:
                stderr.extend(chunk)

        with anyio.fail_after(limit):
            async with anyio.create_task_group() as tg:
                tg.start_soon(drain)
                await process.stdin.send(b"".join(json.dumps(m).encode() + b"\n" for m in lines))
                buffer = b""
                while not wanted <= set(answers):
                    buffer += await process.stdout.receive()
                    *complete, buffer = buffer.split(b"\n")
                    for line in complete:
                        message = json.loads(line)
                        if "id" in message:
                            answers[message["id"]] = message
                await process.stdin.aclose()
                await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
            with anyio.move_on_after(10):
                await process.wait()
    return answers, stderr.decode(errors="replace")

"""Several ``policyc gateway --stateless`` replicas, and a client whose requests alternate.

The balancer is an httpx2 transport: every POST goes to the next replica in
turn (real HTTP to each, over 127.0.0.1), as a round-robin load balancer
would send it; the long-lived GET stream, which a stateless gateway refuses,
goes to the first. It records which replica got which JSON-RPC message.
"""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import ExitStack, asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx2
from gateway_harness import free_port, gateway_argv, running
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

FLOW_KEY = "a-fleet-wide-key-for-the-tests"


class RoundRobin(httpx2.AsyncBaseTransport):
    def __init__(self, ports: Sequence[int]) -> None:
        self.ports = list(ports)
        self._next = itertools.cycle(self.ports)
        self._inner = httpx2.AsyncHTTPTransport()
        self.served: list[tuple[int, str, str | None]] = []
        """(port, JSON-RPC method, tool name) of every POSTed message."""

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        port = next(self._next) if request.method == "POST" else self.ports[0]
        if request.method == "POST":
            body = json.loads(request.content or b"{}")
            name = (body.get("params") or {}).get("name")
            self.served.append((port, body.get("method", "(answer)"), name))
        request.url = request.url.copy_with(port=port)
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()

    def port_of(self, tool: str) -> list[int]:
        return [port for port, method, name in self.served if name == tool]


@contextmanager
def replicas(
    count: int, *args: str, policies: Sequence[Path] | None = None, logs: Path | None = None
) -> Iterator[list[int]]:
    """``count`` stateless gateways with one fleet key; each its own decision log."""
    ports = [free_port() for _ in range(count)]
    with ExitStack() as stack:
        for i, port in enumerate(ports):
            extra = ["--decision-log", str(logs / f"replica-{i}.jsonl")] if logs else []
            argv = [
                sys.executable,
                *gateway_argv(
                    "--http",
                    f"127.0.0.1:{port}",
                    "--stateless",
                    "--flow-key-env",
                    "FLOW_KEY",
                    *extra,
                    *args,
                    policies=policies,
                ),
            ]
            stack.enter_context(running(argv, port, {"FLOW_KEY": FLOW_KEY}))
        yield ports


@asynccontextmanager
async def balanced_client(
    ports: Sequence[int], **options: Any
) -> AsyncIterator[tuple[Client, RoundRobin]]:
    balancer = RoundRobin(ports)
    url = f"http://127.0.0.1:{ports[0]}/mcp"
    options.setdefault("mode", "legacy")
    async with (
        httpx2.AsyncClient(transport=balancer, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), **options) as client,
    ):
        yield client, balancer

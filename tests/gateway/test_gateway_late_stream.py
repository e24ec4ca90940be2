"""A backend's request that arrives before the client opened its stream for it.

Over streamable HTTP a request from a backend that belongs to no client request
travels on the client's GET stream. A backend that asks for roots right after the
handshake (as server-filesystem does) races the client opening that stream; the
SDK's transport drops what it cannot deliver, so the gateway holds the request
until the stream is there (bounded in number and time) and otherwise answers the
backend with an error. The client here is the SDK's own over a real HTTP
connection; its GET is only held back (as a slow network would) until the backend
has asked.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from gateway_harness import HERE, ROOT, calls, http_gateway
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from pydantic import FileUrl

pytestmark = pytest.mark.e2e

LIMIT = 90
PAGING = HERE / "paging_backend.py"
POLICIES = [ROOT / "policies" / "tool-filter.policy"]

GetHook = Callable[[httpx2.Request], Awaitable[None]]


async def _until(found: Callable[[], bool]) -> None:
    while not found():
        await anyio.sleep(0.02)


def _entries(log: Path, key: str) -> list[dict[str, Any]]:
    return [entry for entry in calls(log) if key in entry]


def _gets_held_until(release: Callable[[], Awaitable[None]]) -> GetHook:
    """An httpx event hook: the client's GET (its stream for the server's requests)
    leaves only once ``release`` returns; everything else goes at once."""

    async def hook(request: httpx2.Request) -> None:
        if request.method == "GET":
            await release()

    return hook


async def _roots_client(url: str, root: Path, hook: GetHook) -> Any:
    async def roots(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=FileUrl(root.as_uri()))])

    http = httpx2.AsyncClient(timeout=30, event_hooks={"request": [hook]})
    client = Client(
        streamable_http_client(url, http_client=http), mode="legacy", list_roots_callback=roots
    )
    return http, client


def _backend(tmp_path: Path) -> tuple[str, Path, Path]:
    served = tmp_path / "served"
    mine = served / "mine"
    mine.mkdir(parents=True)
    log = tmp_path / "calls.log"
    return f"fs={sys.executable} {PAGING} {log} fs-eager {served}", mine, log


async def test_roots_asked_before_the_client_opened_its_stream_reach_the_backend(
    tmp_path: Path,
) -> None:
    """The backend asks right after `notifications/initialized`; the client opens its
    GET stream only after that. The gateway holds the request and delivers it on the
    stream once it opens: the backend gets the client's roots, not an error."""
    backend, mine, log = _backend(tmp_path)
    hook = _gets_held_until(lambda: _until(lambda: bool(_entries(log, "asked"))))
    args = ("--backend", backend, "--backend-timeout", "5")
    with http_gateway(*args, policies=POLICIES) as url, anyio.fail_after(LIMIT):
        http, client = await _roots_client(url, mine, hook)
        async with http, client:
            await _until(lambda: bool(_entries(log, "roots")))
    assert _entries(log, "asked") == [{"asked": "roots/list"}]
    answers = _entries(log, "roots")
    assert [answer["error"] for answer in answers] == [False], answers
    assert [root["uri"] for root in answers[0]["roots"]] == [mine.as_uri()]


async def test_a_client_that_never_opens_its_stream_costs_the_backend_an_error_not_a_hang(
    tmp_path: Path,
) -> None:
    """The bound: a client that never opens its GET stream (and sends no request whose
    stream could carry the backend's) leaves the request held for the backend's
    timeout, then the backend is answered with an error; the session goes on."""
    backend, mine, log = _backend(tmp_path)
    never = anyio.Event()
    hook = _gets_held_until(never.wait)
    args = ("--backend", backend, "--backend-timeout", "2")
    with http_gateway(*args, policies=POLICIES) as url, anyio.fail_after(LIMIT):
        http, client = await _roots_client(url, mine, hook)
        async with http, client:
            await _until(lambda: bool(_entries(log, "roots")))
            tools = await client.list_tools()  # the session is still served
    assert _entries(log, "roots") == [{"roots": None, "error": True}]
    assert [tool.name for tool in tools.tools] == ["read_file"]

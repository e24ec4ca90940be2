"""The client transport to an MCP peer given by a command line or a URL.

One opener for the chain's interceptor servers and the gateway's backends, so
both reach a peer the same way: streamable HTTP with an optional bearer token
and bounded waits, or our stdio transport, which stops the process politely
on a normal close and kills its process group when a deadline abandons it.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from typing import Any, Protocol, TextIO

import httpx2
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from .stdio_transport import stdio_transport

HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)


class Peer(Protocol):
    """Where a peer is: what an interceptor server's and a backend's specs share."""

    @property
    def url(self) -> str | None: ...
    @property
    def bearer_token(self) -> str | None: ...
    @property
    def command(self) -> tuple[str, ...] | None: ...
    @property
    def env(self) -> Mapping[str, str] | None: ...
    @property
    def cwd(self) -> str | None: ...


def client_transport(
    stack: AsyncExitStack, peer: Peer, errlog: TextIO
) -> AbstractAsyncContextManager[Any]:
    """The transport to enter; an HTTP client it opens is closed with ``stack``."""
    if peer.url is not None:
        token = peer.bearer_token
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        http = httpx2.AsyncClient(headers=headers, timeout=HTTP_TIMEOUT)
        stack.push_async_callback(http.aclose)
        return streamable_http_client(peer.url, http_client=http)
    command = peer.command
    assert command, "a peer needs a command or a URL"
    params = StdioServerParameters(
        command=command[0],
        args=list(command[1:]),
        env=dict(peer.env) if peer.env is not None else None,
        cwd=peer.cwd,
    )
    return stdio_transport(params, errlog=errlog)

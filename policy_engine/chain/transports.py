"""The client transport to an MCP peer given by a command line or a URL.

One opener for the chain's interceptor servers and the gateway's backends, so
both reach a peer the same way: streamable HTTP with an optional bearer token
and bounded waits, or our stdio transport, which stops the process politely
on a normal close and kills its process group when a deadline abandons it.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from typing import Any, TextIO

import httpx2
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from .stdio_transport import stdio_transport

HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)


def client_transport(
    stack: AsyncExitStack,
    *,
    url: str | None,
    bearer_token: str | None,
    command: tuple[str, ...] | None,
    env: Mapping[str, str] | None,
    cwd: str | None,
    errlog: TextIO,
) -> AbstractAsyncContextManager[Any]:
    """The transport to enter; an HTTP client it opens is closed with ``stack``."""
    if url is not None:
        headers = {"Authorization": f"Bearer {bearer_token}"} if bearer_token else {}
        http = httpx2.AsyncClient(headers=headers, timeout=HTTP_TIMEOUT)
        stack.push_async_callback(http.aclose)
        return streamable_http_client(url, http_client=http)
    assert command, "a peer needs a command or a URL"
    params = StdioServerParameters(
        command=command[0],
        args=list(command[1:]),
        env=dict(env) if env is not None else None,
        cwd=cwd,
    )
    return stdio_transport(params, errlog=errlog)

"""`policyc check --server CMD_OR_URL`: fetch a live server's tools/list as a snapshot.

A URL (http or https) is reached over streamable HTTP; anything else is a
command line started as a stdio server. Pages are followed up to a bound,
and the whole fetch has a deadline, so a server that never answers cannot
hang CI.
"""

from __future__ import annotations

import logging
import shlex
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

FETCH_TIMEOUT_S = 30.0
MAX_PAGES = 100


async def fetch_tools(server: str, timeout_s: float = FETCH_TIMEOUT_S) -> dict[str, Any]:
    """The server's tools as a tools/list result (``{"tools": [...]}``, wire names)."""
    target: Any
    if server.startswith(("http://", "https://")):
        target = server
    else:
        argv = shlex.split(server)
        if not argv:
            raise ValueError("an empty --server command")
        target = StdioServerParameters(command=argv[0], args=argv[1:])
    tools: list[dict[str, Any]] = []
    with anyio.fail_after(timeout_s), anyio.CancelScope() as scope, _sdk_errors(scope) as failed:
        async with Client(target) as client:
            cursor: str | None = None
            for _ in range(MAX_PAGES):
                page = await client.list_tools(cursor=cursor)
                tools += [t.model_dump(by_alias=True, exclude_none=True) for t in page.tools]
                cursor = page.next_cursor
                if not cursor:
                    break
    if failed:
        raise ValueError(f"the server sent a message the MCP client could not read: {failed[0]}")
    return {"tools": tools}


class _Abort(logging.Handler):
    """Ends the fetch at the SDK's first error instead of waiting out the deadline."""

    def __init__(self, scope: anyio.CancelScope, failed: list[str]) -> None:
        super().__init__(logging.ERROR)
        self.scope, self.failed = scope, failed

    def emit(self, record: logging.LogRecord) -> None:
        # The SDK logs a message it cannot parse (JSON nested past pydantic's limit,
        # not JSON-RPC) with its traceback, then drops it: the request would wait forever.
        self.failed.append(record.getMessage()[:200])
        self.scope.cancel()


@contextmanager
def _sdk_errors(scope: anyio.CancelScope) -> Iterator[list[str]]:
    """The SDK's errors during the fetch, caught: never a traceback on the user's terminal."""
    logger = logging.getLogger("mcp")
    failed: list[str] = []
    handler = _Abort(scope, failed)
    before = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield failed
    finally:
        logger.removeHandler(handler)
        logger.propagate = before

"""`policyc check --server CMD_OR_URL`: fetch a live server's tools/list as a snapshot.

A URL (http or https) is reached over streamable HTTP; anything else is a
command line started as a stdio server. Pages are followed up to a bound,
and the whole fetch has a deadline, so a server that never answers cannot
hang CI.
"""

from __future__ import annotations

import shlex
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
    with anyio.fail_after(timeout_s):
        async with Client(target) as client:
            cursor: str | None = None
            for _ in range(MAX_PAGES):
                page = await client.list_tools(cursor=cursor)
                tools += [t.model_dump(by_alias=True, exclude_none=True) for t in page.tools]
                cursor = page.next_cursor
                if not cursor:
                    break
    return {"tools": tools}

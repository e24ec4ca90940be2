"""The backends' handshake answers, kept so that a session can answer ``initialize``
before it starts any backend.

A stateful HTTP session used to start its backends (a process per stdio
backend) on the client's ``initialize``, so every abandoned handshake cost
processes. With this cache only the first session to ask for a protocol
version starts its backends to learn the answer; every later session answers
from here and starts its own backends when the client sends
``notifications/initialized``. The answer depends on the version asked for
(the backend negotiates it), so that is the key; a version this SDK does not
know shares one entry, as a backend answers every unknown version alike.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

_OTHER = "other"


def _key(params: dict[str, Any] | None) -> str:
    version = (params or {}).get("protocolVersion")
    return (
        version if isinstance(version, str) and version in HANDSHAKE_PROTOCOL_VERSIONS else _OTHER
    )


class HandshakeCache:
    """Merged ``initialize`` results by requested protocol version, learned once each."""

    def __init__(self) -> None:
        self._results: dict[str, dict[str, Any]] = {}
        self._locks: dict[str, anyio.Lock] = {}

    def cached(self, params: dict[str, Any] | None) -> dict[str, Any] | None:
        found = self._results.get(_key(params))
        return copy.deepcopy(found) if found is not None else None

    async def answer(
        self,
        params: dict[str, Any] | None,
        learn: Callable[[], Awaitable[dict[str, Any]]],
    ) -> dict[str, Any]:
        """The answer for ``params``; ``learn`` (which starts its session's backends) runs
        only for the first asker. Concurrent first askers wait for it, not each run one."""
        key = _key(params)
        lock = self._locks.setdefault(key, anyio.Lock())
        async with lock:
            found = self.cached(params)
            if found is not None:
                return found
            result = await learn()
            self._results[key] = copy.deepcopy(result)
            return result

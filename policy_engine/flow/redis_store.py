"""Flow state in Redis, shared by replicas behind a load balancer (the `redis` extra).

Per session, three keys under a prefix, named by the session's fingerprint
(no client text in key names): a hash of fingerprint -> entry, a sorted set
of fingerprint -> time for trimming, and the server of the last request.
Each write runs one Lua script, so the cap and the age limit hold
atomically across replicas; every key expires with the session's TTL.
Any Redis failure or timeout is a `FlowStoreError`: flow rules fail closed
on it unless their interceptor is fail-open.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from .fingerprint import Fingerprinter
from .store import FlowEntry, FlowLimits, FlowStoreError

_REMEMBER = """
local now = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
local cap = tonumber(ARGV[3])
for i = 4, #ARGV, 2 do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  redis.call('ZADD', KEYS[2], now, ARGV[i])
end
local old = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now - ttl)
local count = redis.call('ZCARD', KEYS[2])
if count > cap then
  local extra = redis.call('ZRANGE', KEYS[2], 0, count - cap - 1)
  for _, member in ipairs(extra) do table.insert(old, member) end
end
for _, member in ipairs(old) do
  redis.call('HDEL', KEYS[1], member)
  redis.call('ZREM', KEYS[2], member)
end
local seconds = math.ceil(ttl)
redis.call('EXPIRE', KEYS[1], seconds)
redis.call('EXPIRE', KEYS[2], seconds)
return #old
"""


class RedisFlowStore:
    def __init__(
        self,
        url: str,
        fingerprinter: Fingerprinter,
        limits: FlowLimits | None = None,
        prefix: str = "policyc:flow",
        timeout_s: float = 0.5,
    ) -> None:
        try:
            import redis.asyncio as aioredis
        except ImportError as exc:  # the optional extra is not installed
            raise FlowStoreError(
                "the Redis flow store needs the `redis` extra: pip install 'policyc[redis]'"
            ) from exc
        self.limits = limits or FlowLimits()
        self._names = fingerprinter
        self._prefix = prefix
        self._client: Any = aioredis.Redis.from_url(
            url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s
        )
        self._remember = self._client.register_script(_REMEMBER)

    def _keys(self, session: str) -> tuple[str, str, str]:
        base = f"{self._prefix}:{self._names.session_key(session)}"
        return f"{base}:t", f"{base}:o", f"{base}:last"

    async def _call(self, what: str, action: Any) -> Any:
        from redis.exceptions import RedisError

        try:
            return await action
        except (RedisError, OSError, TimeoutError) as exc:
            raise FlowStoreError(f"flow store unavailable ({what}: {type(exc).__name__})") from None

    async def remember(self, session: str, entries: Mapping[str, FlowEntry]) -> None:
        if not entries:
            return
        table, order, _ = self._keys(session)
        args: list[Any] = [
            time.time(),
            self.limits.ttl_seconds,
            self.limits.max_entries_per_session,
        ]
        for fingerprint, entry in entries.items():
            args += [fingerprint, json.dumps([entry.server, entry.source])]
        await self._call("remember", self._remember(keys=[table, order], args=args))

    async def recall(self, session: str, fingerprints: Sequence[str]) -> dict[str, FlowEntry]:
        if not fingerprints:
            return {}
        table, order, _ = self._keys(session)
        pipe = self._client.pipeline(transaction=False)
        pipe.hmget(table, list(fingerprints))
        pipe.zmscore(order, list(fingerprints))
        values, times = await self._call("recall", pipe.execute())
        oldest = time.time() - self.limits.ttl_seconds
        found: dict[str, FlowEntry] = {}
        for fingerprint, raw, seen in zip(fingerprints, values, times, strict=True):
            if raw is None or seen is None or seen < oldest:
                continue
            try:
                server, source = json.loads(raw)
            except (ValueError, TypeError):
                raise FlowStoreError("flow store holds an entry policyc did not write") from None
            found[fingerprint] = FlowEntry(str(server), str(source))
        return found

    async def set_last_server(self, session: str, server: str) -> None:
        _, _, last = self._keys(session)
        ttl = max(1, int(self.limits.ttl_seconds))
        await self._call("last server", self._client.set(last, server, ex=ttl))

    async def last_server(self, session: str) -> str | None:
        _, _, last = self._keys(session)
        raw = await self._call("last server", self._client.get(last))
        return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw

    async def ping(self) -> None:
        """Raise FlowStoreError unless Redis answers: checked at start-up."""
        await self._call("ping", self._client.ping())

    async def aclose(self) -> None:
        await self._client.aclose()

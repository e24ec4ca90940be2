"""Flow state in Redis, shared by replicas behind a load balancer (the `redis` extra).

Per session, three keys under a prefix, named by the session's fingerprint
(no client text in key names): a hash of fingerprint -> entry, a sorted set
of fingerprint -> time for trimming, and a hash of the session's marks (the
store epoch it was made in, the server of its last request, when it lost
state or overflowed). Every call runs one Lua script, so the cap, the age
limit and the loss checks hold atomically across replicas; every key
expires with the session's TTL.

Forgetting is failing open, so state that may be gone is reported, not
guessed: a store epoch record (`PREFIX:epoch`) is read on every call; a
replica that finds it gone or replaced (a restart without persistence, a
flush, an eviction) starts a new epoch, and for one TTL every session
without state in the new epoch is marked lost. Entries and the last server
carry an HMAC under the fleet key: one changed or forged in Redis fails
closed. Any Redis failure or timeout is a `FlowStoreError`.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from typing import Any

from .fingerprint import Fingerprinter
from .store import OVERFLOWED, FlowEntry, FlowLimits, FlowStoreError, Recall, failed

LOST = "the flow store lost this session's state (a Redis restart, flush or eviction)"
FORGED = "the flow store holds an entry policyc did not write"

_SCRIPT = """
local op, known, fresh = ARGV[1], ARGV[2], ARGV[3]
local now, ttl, cap = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local epoch = redis.call('GET', KEYS[1])
if not epoch then
  local lost = 0
  if known ~= '' then lost = now end
  epoch = fresh .. '|' .. lost
  redis.call('SET', KEYS[1], epoch)
end
local bar = string.find(epoch, '|', 1, true)
local eid, lost_at = string.sub(epoch, 1, bar - 1), tonumber(string.sub(epoch, bar + 1))
if known ~= '' and known ~= eid and lost_at == 0 then
  lost_at = now
  epoch = eid .. '|' .. lost_at
  redis.call('SET', KEYS[1], epoch)
end
local writes = op == 'remember' or op == 'set_last'
local made = redis.call('HGET', KEYS[2], 'e')
if not made then
  if lost_at > 0 and now - lost_at < ttl then
    redis.call('HSET', KEYS[2], 'e', eid, 'lost', lost_at)
    writes = true
  elseif writes then
    redis.call('HSET', KEYS[2], 'e', eid)
  end
elseif made ~= eid then
  redis.call('HSET', KEYS[2], 'e', eid, 'lost', now)
  writes = true
end
local marks = {}
for _, mark in ipairs({'lost', 'x'}) do
  local at = redis.call('HGET', KEYS[2], mark)
  if at and now - tonumber(at) >= ttl then
    redis.call('HDEL', KEYS[2], mark)
    at = false
  end
  marks[mark] = at or ''
end
local answer = {epoch}
if op == 'remember' then
  for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now - ttl)) do
    local raw = redis.call('HGET', KEYS[3], member)
    local ok, parsed = pcall(cjson.decode, raw or 'null')
    local seen = ok and type(parsed) == 'table' and tonumber(parsed[1])
    if not raw or (seen and seen < now - ttl) then
      redis.call('HDEL', KEYS[3], member)
      redis.call('ZREM', KEYS[4], member)
    end
  end
  local count = redis.call('HLEN', KEYS[3])
  for i = 7, #ARGV, 2 do
    local kept = redis.call('HEXISTS', KEYS[3], ARGV[i]) == 1
    if not kept and count >= cap then
      redis.call('HSET', KEYS[2], 'x', now)
    else
      if not kept then count = count + 1 end
      redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 1])
      redis.call('ZADD', KEYS[4], now, ARGV[i])
    end
  end
elseif op == 'recall' then
  table.insert(answer, marks['lost'])
  table.insert(answer, marks['x'])
  for i = 7, #ARGV do
    table.insert(answer, redis.call('HGET', KEYS[3], ARGV[i]) or '')
  end
elseif op == 'set_last' then
  redis.call('HSET', KEYS[2], 's', ARGV[7])
else
  table.insert(answer, redis.call('HGET', KEYS[2], 's') or '')
end
if writes then
  local seconds = math.ceil(ttl)
  for i = 2, 4 do redis.call('EXPIRE', KEYS[i], seconds) end
end
return answer
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
        self._epoch = ""
        """The store epoch this replica last saw: empty until its first call."""
        try:
            self._client: Any = aioredis.Redis.from_url(
                url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s
            )
        except ValueError:
            # The URL may hold a password: say what is wrong, never quote it.
            raise FlowStoreError(
                "--flow-store: not a valid Redis URL (check the host, port and query options)"
            ) from None
        self._script = self._client.register_script(_SCRIPT)

    async def _call(self, what: str, action: Any) -> Any:
        from redis.exceptions import RedisError

        try:
            return await action
        except (RedisError, OSError, TimeoutError) as exc:
            message = f"flow store unavailable ({what}: {type(exc).__name__})"
            raise failed("redis", what, message) from None

    async def _run(self, op: str, session: str, now: float, args: Sequence[str]) -> list[str]:
        """One script call; the replica adopts the epoch it reports."""
        base = f"{self._prefix}:{self._names.session_key(session)}"
        keys = [f"{self._prefix}:epoch", f"{base}:m", f"{base}:t", f"{base}:o"]
        head = [op, self._epoch, os.urandom(8).hex(), repr(now)]
        head += [repr(self.limits.ttl_seconds), str(self.limits.max_entries_per_session)]
        raw = await self._call(op, self._script(keys=keys, args=[*head, *args]))
        answer = [x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x) for x in raw]
        self._epoch = answer[0].partition("|")[0]
        return answer[1:]

    def _seal(self, session: str, *parts: str) -> str:
        """The fleet key's tag on a record of this session: a forged or edited one fails."""
        return self._names.of("\x00".join(("flow-record", session, *parts)))

    async def remember(self, session: str, entries: Mapping[str, FlowEntry]) -> None:
        if not entries:
            return
        now = time.time()
        args: list[str] = []
        for fingerprint, entry in entries.items():
            tag = self._seal(session, fingerprint, repr(now), entry.server, entry.source)
            args += [fingerprint, json.dumps([now, entry.server, entry.source, tag])]
        await self._run("remember", session, now, args)

    async def recall(self, session: str, fingerprints: Sequence[str]) -> Recall:
        if not fingerprints:
            return Recall()
        now = time.time()
        lost, overflowed, *values = await self._run("recall", session, now, list(fingerprints))
        reason = LOST if lost else OVERFLOWED if overflowed else None
        found: dict[str, FlowEntry] = {}
        for fingerprint, raw in zip(fingerprints, values, strict=True):
            if not raw:
                continue
            entry = self._open(session, fingerprint, raw)
            if entry is None:
                reason = FORGED
            elif entry[0] >= now - self.limits.ttl_seconds:
                found[fingerprint] = entry[1]
        return Recall(found, reason)

    def _open(self, session: str, fingerprint: str, raw: str) -> tuple[float, FlowEntry] | None:
        """A stored entry, if its tag is the fleet key's for exactly these fields."""
        try:
            seen, server, source, tag = json.loads(raw)
            fields = (fingerprint, repr(float(seen)), str(server), str(source))
        except (ValueError, TypeError):
            return None
        if tag != self._seal(session, *fields):
            return None
        return float(seen), FlowEntry(str(server), str(source))

    async def set_last_server(self, session: str, server: str) -> None:
        record = json.dumps([server, self._seal(session, "last", server)])
        await self._run("set_last", session, time.time(), [record])

    async def last_server(self, session: str) -> str | None:
        """The last request's server; None when unknown or not policyc's own record."""
        (raw,) = await self._run("last", session, time.time(), [])
        try:
            server, tag = json.loads(raw) if raw else (None, None)
        except (ValueError, TypeError):
            return None
        if not isinstance(server, str) or tag != self._seal(session, "last", server):
            return None
        return server

    async def ping(self) -> None:
        """Raise FlowStoreError unless Redis answers: checked at start-up."""
        await self._call("ping", self._client.ping())

    async def aclose(self) -> None:
        await self._client.aclose()

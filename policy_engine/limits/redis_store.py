"""Limit counters in Redis, shared by replicas behind a load balancer (the `redis` extra).

One key per counter, named by its fingerprint (no client text in key
names), holding the GCRA TAT and expiring when it does, and per rule a
sorted set of its live counters by expiry, which bounds their number. One
Lua script checks and counts every limit of a request atomically, with
Redis's own clock, so replicas agree on time and no update is lost. Any
Redis failure, or an answer slower than the timeout, is a `LimitStoreError`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import Any

from .gcra import Outcome, verdict
from .store import Charge, LimitBounds, LimitStoreError, Verdict, failed

# KEYS: per charge, its counter and its rule's index. ARGV: max keys, then per
# charge amount, limit, window (seconds). Returns status (0 allowed, 1 refused,
# 2 full), then per charge: allowed (0/1), level, retry after (-1: never).
_CHARGE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local max_keys = tonumber(ARGV[1])
local n = #KEYS / 2
local out = {0}
local tats = {}
local allowed = true
for i = 1, n do
  local key, index = KEYS[2 * i - 1], KEYS[2 * i]
  local amount = tonumber(ARGV[3 * i - 1])
  local limit = tonumber(ARGV[3 * i])
  local window = tonumber(ARGV[3 * i + 1])
  local tat = tonumber(redis.call('GET', key) or '0') or 0
  if tat <= now then
    redis.call('ZREMRANGEBYSCORE', index, '-inf', now)
    if redis.call('ZCARD', index) >= max_keys then
      return {2}
    end
  end
  local interval = window / limit
  local base = math.max(tat, now)
  local after = base + amount * interval
  local level = (base - now) / interval
  local ok = after - now <= window + 1e-9
  local retry = '-1'
  if not ok then
    allowed = false
    if amount <= limit then retry = string.format('%.17g', after - window - now) end
  end
  tats[i] = after
  table.insert(out, ok and 1 or 0)
  table.insert(out, string.format('%.17g', level))
  table.insert(out, retry)
end
if allowed then
  for i = 1, n do
    local key, index = KEYS[2 * i - 1], KEYS[2 * i]
    local ms = math.ceil((tats[i] - now) * 1000) + 1
    redis.call('SET', key, string.format('%.17g', tats[i]), 'PX', ms)
    redis.call('ZADD', index, tats[i], key)
    redis.call('PEXPIRE', index, math.ceil(tonumber(ARGV[3 * i + 1]) * 1000) + 1000)
  end
else
  out[1] = 1
end
return out
"""


class RedisLimitStore:
    def __init__(
        self, url: str, bounds: LimitBounds | None = None, prefix: str = "policyc:limit"
    ) -> None:
        try:
            import redis.asyncio as aioredis
            from redis.asyncio.retry import Retry
            from redis.backoff import NoBackoff
        except ImportError as exc:  # the optional extra is not installed
            raise LimitStoreError(
                "the Redis limit store needs the `redis` extra: pip install 'policyc[redis]'"
            ) from exc
        self.bounds = bounds or LimitBounds()
        self._prefix = prefix
        timeout = self.bounds.timeout_s
        # No client retries: a script resent after a timeout could run twice and count a
        # message twice. A store that does not answer fails this message; the next one
        # tries again.
        self._client: Any = aioredis.Redis.from_url(
            url,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            retry=Retry(NoBackoff(), 0),
        )
        self._script = self._client.register_script(_CHARGE)

    async def charge(self, charges: Sequence[Charge]) -> Verdict:
        if not charges:
            return Verdict(True, (), (), None)
        keys: list[str] = []
        args: list[Any] = [self.bounds.max_keys]
        for charge in charges:
            keys += [f"{self._prefix}:{charge.key}", f"{self._prefix}:{charge.rule}:keys"]
            args += [repr(charge.amount), repr(charge.limit), repr(charge.window_s)]
        reply = await self._call("charge", self._script(keys=keys, args=args))
        return _parse(reply, self.bounds)

    async def _call(self, what: str, action: Awaitable[Any]) -> Any:
        """One round trip, bounded in time whatever the client's own retries do."""
        from redis.exceptions import RedisError

        try:
            # Connect and read timeouts bound one attempt each; this bounds the whole call.
            return await asyncio.wait_for(action, self.bounds.timeout_s * 4)
        except (RedisError, OSError, TimeoutError) as exc:
            message = f"limit store unavailable ({what}: {type(exc).__name__})"
            raise failed("redis", what, message) from None

    async def ping(self) -> None:
        """Raise LimitStoreError unless Redis answers: checked at start-up."""
        await self._call("ping", self._client.ping())

    async def aclose(self) -> None:
        await self._client.aclose()


def _parse(reply: Any, bounds: LimitBounds) -> Verdict:
    try:
        status = int(reply[0])
        if status == 2:
            message = f"limit store full ({bounds.max_keys} live counters)"
            raise failed("redis", "new_counter", message)
        outcomes = []
        for i in range(1, len(reply), 3):
            retry = float(reply[i + 2])
            outcomes.append(
                Outcome(int(reply[i]) == 1, 0.0, float(reply[i + 1]), None if retry < 0 else retry)
            )
    except (TypeError, ValueError, IndexError):
        raise failed(
            "redis", "charge", "limit store gave an answer policyc did not expect"
        ) from None
    return verdict(status == 0, outcomes)

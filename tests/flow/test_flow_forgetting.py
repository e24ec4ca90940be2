"""Forgetting a secret is failing open. Each attack here made `policyc serve` (over
streamable HTTP, with its in-process store or a real Redis) or the real gateway
forget where a key came from, so the key then reached another server: other
sessions evicting the victim's, one result flooding the session's cap, a key
written as an object member name, Redis losing its data, and Redis entries
rewritten by someone who can write to it."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import MCPError

from .conftest import RedisServer
from .test_flow_replicas import READ, RESULT, SECRET, WRITE, served, write_guard

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gateway"))
from gateway_harness import local_client
from server_harness import http_client, request

from .test_flow_gateway import GUARD, two_backends

pytestmark = pytest.mark.e2e

CLEAN = {"name": "write_query", "arguments": {"sql": "insert 'nothing secret'"}}


def invocation(phase: str, payload: dict[str, Any], session: str) -> dict[str, Any]:
    return {
        "name": "cross-boundary-guard",
        "event": "tools/call",
        "phase": phase,
        "payload": payload,
        "context": {"sessionId": session},
    }


async def verdicts(url: str, *steps: tuple[str, dict[str, Any], str]) -> list[Any]:
    """Each step's `valid`, or the JSON-RPC error it got, over one SDK client session."""
    found: list[Any] = []
    async with http_client(url) as client:
        for phase, payload, session in steps:
            try:
                answer = await request(
                    client, "interceptor/invoke", invocation(*(phase, payload, session))
                )
                found.append(answer["valid"])
            except MCPError as err:
                found.append(err.error)
    return found


async def taint(url: str, session: str) -> None:
    """The session reads the key from the filesystem server."""
    assert await verdicts(url, ("request", READ, session), ("response", RESULT, session)) == [
        True,
        True,
    ]


@contextmanager
def store(kind: str, policy: Path, redis: RedisServer | None, *options: str) -> Iterator[str]:
    extra = ("--flow-store", redis.url) if kind == "redis" and redis is not None else ()
    with served(policy, *extra, *options) as url:
        yield url


# -- 1. eviction by other sessions ----------------------------------------------


async def test_other_sessions_cannot_evict_a_session_that_holds_a_key(tmp_path: Path) -> None:
    policy = write_guard(tmp_path)
    with served(policy, "--flow-max-sessions", "20") as url, anyio.fail_after(120):
        await taint(url, "victim")
        harmless = [("request", READ, f"other-{n}") for n in range(60)]
        assert set(await verdicts(url, *harmless)) == {True}
        assert await verdicts(url, ("request", WRITE, "victim")) == [False]


async def test_a_store_full_of_tainted_sessions_refuses_a_new_one(tmp_path: Path) -> None:
    policy = write_guard(tmp_path)
    with served(policy, "--flow-max-sessions", "3") as url, anyio.fail_after(120):
        for n in range(3):
            await taint(url, f"victim-{n}")
        (refused,) = await verdicts(url, ("request", READ, "newcomer"))
        assert not isinstance(refused, bool)
        assert refused.code == -32603
        assert "flow store full" in json.dumps(refused.data)
        denied = [("request", WRITE, f"victim-{n}") for n in range(3)]
        assert await verdicts(url, *denied) == [False, False, False]


# -- 2. flooding one session ----------------------------------------------------

FLOOD = {
    "content": [
        {"type": "text", "text": " ".join(f"AKIA{n:016d}" for n in range(10_001))},
    ]
}


@pytest.mark.parametrize("kind", ["memory", "redis"])
async def test_a_result_of_10001_keys_does_not_push_the_real_one_out(
    kind: str, redis_server: RedisServer, tmp_path: Path
) -> None:
    assert len(json.dumps(FLOOD)) > 200_000
    policy = write_guard(tmp_path)
    with store(kind, policy, redis_server) as url, anyio.fail_after(180):
        await taint(url, "s1")
        assert await verdicts(url, ("response", FLOOD, "s1")) == [True]
        other_key = {"name": "write_query", "arguments": {"sql": "AKIAZZZZZZZZZZZZZZZZ"}}
        assert await verdicts(
            url, ("request", WRITE, "s1"), ("request", other_key, "s1"), ("request", CLEAN, "s1")
        ) == [False, False, True]


# -- 3. a key as an object key --------------------------------------------------


async def test_a_key_sent_as_a_member_name_is_refused(tmp_path: Path) -> None:
    policy = tmp_path / "guard.policy"
    policy.write_text(GUARD)
    log = tmp_path / "calls.jsonl"
    with anyio.fail_after(90):
        async with local_client(*two_backends(log), policies=[policy]) as client:
            await client.call_tool("read_file", {"path": "/app/.env"})
            with pytest.raises(MCPError) as blocked:
                await client.call_tool("write_query", {"sql": "select 1", SECRET: "x"})
            assert blocked.value.error.code == -32602
            assert "must not reach `database`" in json.dumps(blocked.value.error.data)
    assert all(c["server"] != "database" for c in map(json.loads, log.read_text().splitlines()))


async def test_a_key_read_as_a_member_name_is_remembered(tmp_path: Path) -> None:
    policy = write_guard(tmp_path)
    keyed = {"content": [], "structuredContent": {SECRET: "the value does not matter"}}
    with served(policy) as url, anyio.fail_after(60):
        steps = [("request", READ, "s1"), ("response", keyed, "s1"), ("request", WRITE, "s1")]
        assert await verdicts(url, *steps) == [True, True, False]


# -- 4. Redis losing its data ---------------------------------------------------


async def test_a_redis_flush_does_not_forget_a_flow(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    import redis.asyncio as aioredis

    policy = write_guard(tmp_path)
    with served(policy, "--flow-store", redis_server.url) as url, anyio.fail_after(60):
        await taint(url, "s1")
        raw = aioredis.Redis.from_url(redis_server.url)
        await raw.flushall()
        await raw.aclose()
        assert await verdicts(url, ("request", WRITE, "s1"), ("request", CLEAN, "s1")) == [
            False,
            True,
        ]


async def test_a_redis_restart_without_persistence_does_not_forget_a_flow(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    policy = write_guard(tmp_path)
    with served(policy, "--flow-store", redis_server.url) as url, anyio.fail_after(60):
        await taint(url, "s1")
        redis_server.stop()
        redis_server.start()
        await verdicts(url, ("request", CLEAN, "reconnect"))  # the first call may find it down
        assert await verdicts(url, ("request", WRITE, "s1")) == [False]


# -- 5. tampering with Redis ----------------------------------------------------


async def rewrite_entries(url: str, edit: Any) -> int:
    """Apply ``edit(raw_client, key)`` to every session's entries: how many keys it touched."""
    import redis.asyncio as aioredis

    raw = aioredis.Redis.from_url(url)
    try:
        keys = [k.decode() for k in await raw.keys("policyc:flow:*")]
        touched = [k for k in keys if await edit(raw, k)]
        return len(touched)
    finally:
        await raw.aclose()


async def as_if_from_database(raw: Any, key: str) -> bool:
    if not key.endswith(":t"):
        return False
    for field, value in (await raw.hgetall(key)).items():
        await raw.hset(key, field, value.replace(b"filesystem", b"database"))
    return True


async def aged_out(raw: Any, key: str) -> bool:
    if not key.endswith(":o"):
        return False
    for member in await raw.zrange(key, 0, -1):
        await raw.zadd(key, {member: 0})
    return True


@pytest.mark.parametrize("edit", [as_if_from_database, aged_out])
async def test_an_entry_edited_in_redis_fails_closed(
    edit: Any, redis_server: RedisServer, tmp_path: Path
) -> None:
    policy = write_guard(tmp_path)
    with served(policy, "--flow-store", redis_server.url) as url, anyio.fail_after(60):
        await taint(url, "s1")
        assert await rewrite_entries(redis_server.url, edit) == 1
        assert await verdicts(url, ("request", WRITE, "s1")) == [False]

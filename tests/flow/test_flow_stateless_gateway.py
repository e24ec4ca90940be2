"""Two stateless gateway replicas behind a round-robin balancer share flow state in one
real Redis: a key read through one replica never reaches the database server through
the other."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest
from mcp import MCPError

from .conftest import RedisServer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gateway"))
from balancer import balanced_client, replicas

from .test_flow_gateway import GUARD, SECRET, calls, two_backends

pytestmark = pytest.mark.e2e


async def test_a_flow_split_across_replicas_is_still_denied(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    policy = tmp_path / "guard.policy"
    policy.write_text(GUARD)
    log = tmp_path / "calls.jsonl"
    args = [*two_backends(log), "--flow-store", redis_server.url]
    with replicas(2, *args, policies=[policy], logs=tmp_path) as ports, anyio.fail_after(90):
        async with balanced_client(ports) as (client, balancer):
            await client.list_tools()  # the SDK lists before a first call otherwise
            read = await client.call_tool("read_file", {"path": "/app/.env"})
            assert SECRET in read.content[0].text
            with pytest.raises(MCPError) as blocked:
                await client.call_tool("write_query", {"sql": f"insert '{SECRET}'"})
            assert blocked.value.error.code == -32602
            assert "must not reach `database`" in json.dumps(blocked.value.error.data)
            assert SECRET not in json.dumps(blocked.value.error.data)
            back = await client.call_tool("write_file", {"path": "/tmp/copy", "text": SECRET})
            assert not back.is_error
            clean = await client.call_tool("write_query", {"sql": "insert 'nothing secret'"})
            assert not clean.is_error
        # The read and the denied write were served by different replicas.
        (read_port,) = balancer.port_of("read_file")
        denied_port = balancer.port_of("write_query")[0]
        assert read_port != denied_port, balancer.served
    assert [(c["server"], c["tool"]) for c in calls(log)] == [
        ("filesystem", "read_file"),
        ("filesystem", "write_file"),
        ("database", "write_query"),
    ]
    assert SECRET not in json.dumps([c for c in calls(log) if c["server"] == "database"])
    for replica in (tmp_path / "replica-0.jsonl", tmp_path / "replica-1.jsonl"):
        events = [json.loads(line)["event"] for line in replica.read_text().splitlines()]
        assert "tools/call" in events

"""The relaybleed flow through the real gateway with two real backends: the key read
from the filesystem server never reaches the database server; writing it back to
the filesystem server passes. Attribution is the gateway's own (context.server)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest
from mcp import MCPError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gateway"))
from gateway_harness import local_client

pytestmark = pytest.mark.e2e

HERE = Path(__file__).resolve().parent
BACKEND = HERE / "flow_backend.py"
SECRET = "AKIAIOSFODNN7EXAMPLE"
GUARD = """\
validator cross-server-guard {
  on tools/call request
  on tools/call response
  deny flow AWS_ACCESS_KEY across servers "secret from {source} must not reach `{server}`"
}
"""


def two_backends(log: Path) -> list[str]:
    """`--backend` options for the file server and the database, logging to ``log``."""
    return [
        "--backend",
        f"filesystem={sys.executable} {BACKEND} filesystem {log}",
        "--backend",
        f"database={sys.executable} {BACKEND} database {log}",
    ]


def calls(log: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


async def test_a_key_read_from_one_backend_never_reaches_the_other(tmp_path: Path) -> None:
    policy = tmp_path / "guard.policy"
    policy.write_text(GUARD)
    log = tmp_path / "calls.jsonl"
    backends = two_backends(log)
    with anyio.fail_after(90):
        async with local_client(*backends, policies=[policy]) as client:
            read = await client.call_tool("read_file", {"path": "/app/.env"})
            assert not read.is_error
            assert SECRET in read.content[0].text  # a read alone is fine
            with pytest.raises(MCPError) as blocked:
                await client.call_tool("write_query", {"sql": f"insert '{SECRET}'"})
            assert blocked.value.error.code == -32602  # the gateway's documented block
            assert "must not reach `database`" in json.dumps(blocked.value.error.data)
            assert SECRET not in json.dumps(blocked.value.error.data)
            back = await client.call_tool("write_file", {"path": "/tmp/copy", "text": SECRET})
            assert not back.is_error
            clean = await client.call_tool("write_query", {"sql": "insert 'nothing secret'"})
            assert not clean.is_error
    tools = [(c["server"], c["tool"]) for c in calls(log)]
    assert tools == [
        ("filesystem", "read_file"),
        ("filesystem", "write_file"),
        ("database", "write_query"),
    ]
    assert all(
        SECRET not in json.dumps(c["arguments"]) for c in calls(log) if c["server"] == "database"
    )


SCOPED = """\
validator reverse-only {
  on tools/call request
  on tools/call response
  deny flow AWS_ACCESS_KEY from database to filesystem "database data reaches `{server}`"
}

validator into-the-database {
  on tools/call request
  on tools/call response
  deny flow AWS_ACCESS_KEY to database "secret from {source} reaches the database"
}
"""


async def test_scoped_flow_rules_guard_only_the_servers_they_name(tmp_path: Path) -> None:
    policy = tmp_path / "scoped.policy"
    policy.write_text(SCOPED)
    log = tmp_path / "calls.jsonl"
    with anyio.fail_after(90):
        async with local_client(*two_backends(log), policies=[policy]) as client:
            await client.call_tool("read_file", {"path": "/app/.env"})
            with pytest.raises(MCPError) as blocked:
                await client.call_tool("write_query", {"sql": f"insert '{SECRET}'"})
            data = json.dumps(blocked.value.error.data)
            assert "reaches the database" in data and "database data" not in data
            back = await client.call_tool("write_file", {"path": "/tmp/copy", "text": SECRET})
            assert not back.is_error
    assert [(c["server"], c["tool"]) for c in calls(log)] == [
        ("filesystem", "read_file"),
        ("filesystem", "write_file"),
    ]

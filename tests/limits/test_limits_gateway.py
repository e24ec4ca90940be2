"""A rate limit through two stateless gateway replicas behind a round-robin balancer,
sharing one real Redis: N+1 concurrent calls give exactly one refusal, per client."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest
from mcp import MCPError

from .conftest import RedisServer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gateway"))
from balancer import FLOW_KEY, balanced_client, replicas
from flow.test_flow_gateway import calls, two_backends
from gateway_harness import RECORDER, free_port, local_client, policyc_gateway

# The tests that start gateway replicas or redis carry the e2e mark.

LIMIT = 6
QUOTA = f"""\
validator quota {{
  on tools/call request
  limit rate {LIMIT} per hour by context.sessionId code per-session
}}
"""
MARKER = "payload-marker-never-echoed"


@pytest.mark.e2e
async def test_n_plus_one_calls_over_two_replicas_give_exactly_one_refusal_per_client(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    policy = tmp_path / "quota.policy"
    policy.write_text(QUOTA)
    log = tmp_path / "calls.jsonl"
    # A loaded test machine must not turn a slow answer into a refusal here.
    args = [*two_backends(log), "--flow-store", redis_server.url, "--limit-timeout", "3"]
    refusals: dict[str, list[MCPError]] = {"a": [], "b": []}
    served: dict[str, set[int]] = {}

    async def client(name: str) -> None:
        async with balanced_client(ports) as (session, balancer):
            await session.list_tools()

            async def one(i: int) -> None:
                try:
                    await session.call_tool("read_file", {"path": f"/{MARKER}/{name}{i}"})
                except MCPError as refused:
                    refusals[name].append(refused)

            async with anyio.create_task_group() as group:
                for i in range(LIMIT + 1):
                    group.start_soon(one, i)
            served[name] = set(balancer.port_of("read_file"))

    with replicas(2, *args, policies=[policy], logs=tmp_path) as ports, anyio.fail_after(120):
        async with anyio.create_task_group() as group:
            group.start_soon(client, "a")
            group.start_soon(client, "b")
    for name in ("a", "b"):
        (refused,) = refusals[name]
        assert refused.error.code == -32602
        data = refused.error.data
        assert isinstance(data, dict) and 0 < data["retryAfterMs"] <= 3_600_000 // LIMIT
        assert "rate limit exceeded" in json.dumps(data)
        assert MARKER not in json.dumps(refused.error.model_dump(mode="json"))
        assert served[name] == set(ports)  # both replicas took part
    reads = [c for c in calls(log) if c["tool"] == "read_file"]
    assert len(reads) == 2 * LIMIT


def test_stateless_replicas_with_limits_and_no_shared_store_refuse_to_start(
    tmp_path: Path,
) -> None:
    policy = tmp_path / "quota.policy"
    policy.write_text(QUOTA)
    done = policyc_gateway(
        *("--http", f"127.0.0.1:{free_port()}", "--stateless", "--flow-key-env", "FLOW_KEY"),
        *two_backends(tmp_path / "calls.jsonl"),
        policies=[policy],
        env={"FLOW_KEY": FLOW_KEY},
    )
    assert done.exit_code == 2
    assert "--stateless with rate limits needs --flow-store" in done.stderr


@pytest.mark.e2e
async def test_redis_killed_mid_window_fails_closed_through_the_gateway_then_recovers(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    policy = tmp_path / "quota.policy"
    policy.write_text(QUOTA)
    log = tmp_path / "calls.jsonl"
    # A loaded test machine must not turn a slow answer into a refusal here.
    args = [*two_backends(log), "--flow-store", redis_server.url, "--limit-timeout", "3"]
    with replicas(2, *args, policies=[policy], logs=tmp_path) as ports, anyio.fail_after(120):
        async with balanced_client(ports) as (session, _):
            await session.list_tools()
            for i in range(2):
                assert not (await session.call_tool("read_file", {"path": f"/ok{i}"})).is_error
            assert redis_server.process is not None
            redis_server.process.kill()
            redis_server.process.wait()
            for i in range(2):  # one call on each replica
                with anyio.fail_after(30), pytest.raises(MCPError) as failed:
                    await session.call_tool("read_file", {"path": f"/{MARKER}{i}"})
                assert failed.value.error.code == -32602
                text = json.dumps(failed.value.error.model_dump(mode="json"))
                assert "limit store unavailable" in text and MARKER not in text
                assert "retryAfterMs" not in text  # waiting is not what clears it
            redis_server.start()  # without persistence: counters start again from zero
            for i in range(LIMIT):
                with anyio.fail_after(30):
                    while True:
                        try:
                            await session.call_tool("read_file", {"path": f"/again{i}"})
                            break
                        except MCPError as refused:
                            assert "limit store unavailable" in json.dumps(
                                refused.error.model_dump(mode="json")
                            )
                            await anyio.sleep(0.2)
            with pytest.raises(MCPError):
                await session.call_tool("read_file", {"path": "/one-too-many"})
    reads = [c for c in calls(log) if c["tool"] == "read_file"]
    assert len(reads) == 2 + LIMIT
    assert not [c for c in reads if MARKER in json.dumps(c)]


@pytest.mark.parametrize(
    ("flag", "second_passes"), [((), False), (("--limit-max-keys", "2"), True)]
)
async def test_the_config_files_limits_table_bounds_the_counters_and_a_flag_wins(
    tmp_path: Path, flag: tuple[str, ...], second_passes: bool
) -> None:
    """`[limits] max_keys = 1`: a second key is refused (fail closed, counters kept),
    unless `--limit-max-keys` given on the command line raises it."""
    policy = tmp_path / "keyed.policy"
    policy.write_text(
        "validator keyed {\n  on tools/call request\n"
        "  limit rate 5 per hour by $.arguments.text code per-text\n}\n"
    )
    config = tmp_path / "gateway.toml"
    config.write_text(
        f'policies = ["{policy}"]\n\n[[backends]]\nname = "rec"\n'
        f'command = ["{sys.executable}", "{RECORDER}", "{tmp_path / "calls.jsonl"}"]\n\n'
        "[limits]\nmax_keys = 1\ntimeout_s = 5\n"
    )
    with anyio.fail_after(60):
        async with local_client("--config", str(config), *flag, policies=[]) as client:
            assert not (await client.call_tool("echo", {"text": "first"})).is_error
            if second_passes:
                assert not (await client.call_tool("echo", {"text": "second"})).is_error
                return
            with pytest.raises(MCPError) as full:
                await client.call_tool("echo", {"text": "second"})
            assert full.value.error.code == -32602  # the chain failed closed
            assert "limit store full (1 live counters)" in json.dumps(
                full.value.error.model_dump(mode="json")
            )
            assert not (await client.call_tool("echo", {"text": "first"})).is_error

"""`policyc serve --record` writes what `policyc replay` reads, owner-only, over real stdio."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from policy_engine.cli.main import cli

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from server_harness import request

pytestmark = pytest.mark.e2e

SETS = Path(__file__).resolve().parent / "sets"


def test_recorded_traffic_replays_against_a_candidate(tmp_path: Path) -> None:
    record = tmp_path / "traffic.jsonl"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "policy_engine.cli.main", "serve", str(SETS / "base"), "--record", str(record)],
    )
    calls = [
        ("tool-guard", {"name": "drop_database", "arguments": {}}),
        ("tool-guard", {"name": "query", "arguments": {"limit": 80}}),
        ("pii", {"name": "send", "email": "carol@example.com", "arguments": {}}),
    ]

    async def serve_and_invoke() -> None:
        with anyio.fail_after(60):
            async with Client(stdio_client(params), mode="legacy") as client:
                for name, payload in calls:
                    await request(
                        client,
                        "interceptor/invoke",
                        {
                            "name": name,
                            "event": "tools/call",
                            "phase": "request",
                            "payload": payload,
                            "context": {"sessionId": "s1"},
                        },
                    )

    anyio.run(serve_and_invoke)  # replay below runs its own loop, so this test is sync
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert [(r["interceptor"], r["decision"]) for r in lines] == [
        ("tool-guard", "deny"),
        ("tool-guard", "allow"),
        ("pii", "allow"),
    ]
    assert lines[2]["payload"]["email"] == "carol@example.com"  # as received, not redacted
    assert lines[0]["context"] == {"sessionId": "s1"}
    result = CliRunner().invoke(
        cli,
        [
            "replay",
            str(SETS / "candidate"),
            "--baseline",
            str(SETS / "base"),
            "--traffic",
            str(record),
            "--format",
            "json",
        ],
    )
    report = json.loads(result.output)
    kinds = {(g["kind"], g["rule"]) for g in report["groups"]}
    assert kinds == {
        ("blocked-to-allowed", "blocked-tool"),
        ("allowed-to-blocked", "too-high"),
        ("mutation", "email"),
    }
    assert result.exit_code == 1


def test_an_existing_record_file_is_narrowed_to_owner_only(tmp_path: Path) -> None:
    from policy_engine.server.traffic_recorder import open_recorder

    path = tmp_path / "t.jsonl"
    path.write_text("")
    path.chmod(0o644)
    recorder = open_recorder(str(path))
    recorder.close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_the_gateway_records_chain_runs_for_replay(tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gateway"))
    from gateway_harness import local_client, recorder

    record = tmp_path / "gateway.jsonl"
    log = tmp_path / "backend.jsonl"

    async def drive() -> None:
        with anyio.fail_after(90):
            async with local_client(
                "--backend", recorder(log), "--record", str(record), policies=[SETS / "base"]
            ) as client:
                await client.call_tool("echo", {"text": "mail carol@example.com"})

    anyio.run(drive)
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    request = next(r for r in lines if r["event"] == "tools/call" and r["phase"] == "request")
    assert request["payload"]["arguments"]["text"] == "mail carol@example.com"  # as received
    assert request["backend"] == "rec" and request["context"]["server"] == "rec"
    assert request["decision"] == "allow"
    result = CliRunner().invoke(
        cli,
        [
            "replay",
            str(SETS / "candidate"),
            "--baseline",
            str(SETS / "base"),
            "--traffic",
            str(record),
            "--format",
            "json",
        ],
    )
    report = json.loads(result.output)
    # only hooked events run a chain, so only the call is recorded; no rule changed for it
    assert report["messages"] == 1
    assert report["groups"] == []
    assert result.exit_code == 0


def test_a_record_file_rotates_by_size(tmp_path: Path) -> None:
    """A busy server's record is bounded on disk: it rotates, owner-only, like the decision log."""
    from policy_engine.server.traffic_recorder import RECORD_MAX_BYTES, open_recorder

    assert RECORD_MAX_BYTES <= 1024 * 1024 * 1024
    path = tmp_path / "traffic.jsonl"
    recorder = open_recorder(str(path), max_bytes=2_000, backups=2)
    line = json.dumps({"event": "tools/call", "phase": "request", "payload": {"q": "x" * 60}})
    for _ in range(200):
        recorder.record_line(line + "\n")
    recorder.close()
    kept = sorted(p.name for p in tmp_path.iterdir())
    assert kept == ["traffic.jsonl", "traffic.jsonl.1", "traffic.jsonl.2"]
    for name in kept:
        assert (tmp_path / name).stat().st_size <= 2_000
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600

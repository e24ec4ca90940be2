"""`policyc replay` streams a recording instead of holding it (issue 33).

Main read every record into a list (payloads, keys and all) before running
the first one: a 200,000-message recording of 300-byte notes peaked at
533 MiB. Streamed (104 MiB), what stays is a 16-byte digest per distinct message and
the examples of each group of changes. The peak is measured in a wrapper
process of its own, so no other test's child counts.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from policy_engine.compiler import compile_policies
from policy_engine.impact.replay import replay
from policy_engine.impact.report import to_json
from policy_engine.impact.traffic import iter_traffic, read_traffic

pytestmark = pytest.mark.e2e

SETS = Path(__file__).parent / "sets"
TRAFFIC = Path(__file__).parent / "traffic.jsonl"
MESSAGES = 200_000
PEAK_BOUND_MIB = 250
"""Measured: 104 MiB streamed, 533 MiB on the list-holding code (load average 8)."""

_MEASURE = """\
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
print(done.stdout)
print(done.stderr[-2000:], file=sys.stderr)
"""


def _record(path: Path, count: int) -> None:
    """Distinct messages (none is dropped as a duplicate), one in seven a blocked tool."""
    note = "x" * 300
    with path.open("w", encoding="utf-8") as handle:
        for i in range(count):
            blocked = i % 7 == 0
            payload = {
                "name": "drop_database" if blocked else "read_file",
                "arguments": {"path": f"/tmp/{i}", "note": note},
            }
            record = {
                "v": 1,
                "event": "tools/call",
                "phase": "request",
                "side": "sending",
                # Every tenth blocked call was recorded as allowed: a change to report.
                "decision": "allow" if not blocked or i % 10 == 0 else "deny",
                "payload": payload,
            }
            handle.write(json.dumps(record) + "\n")


def test_replaying_200k_messages_stays_under_a_memory_bound(tmp_path: Path) -> None:
    traffic = tmp_path / "big.jsonl"
    _record(traffic, MESSAGES)
    command = [sys.executable, "-m", "policy_engine.cli.main", "replay", str(SETS / "base")]
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, *command, "--traffic", str(traffic), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    status, peak_mib = (int(v) for v in done.stdout.split("\n", 1)[0].split())
    output = done.stdout.split("\n", 1)[1]
    assert status == 1, done.stderr  # the recorded allows of blocked tools are changes
    report = json.loads(output)
    assert report["messages"] == MESSAGES
    assert report["changedMessages"] == len(range(0, MESSAGES, 70))
    assert peak_mib < PEAK_BOUND_MIB, f"replay peaked at {peak_mib} MiB"


@pytest.mark.parametrize("baseline", [None, "base"])
@pytest.mark.parametrize("candidate", ["candidate", "weakened", "reordered"])
def test_streamed_replay_reports_what_the_listed_replay_does(
    candidate: str, baseline: str | None
) -> None:
    after = compile_policies([str(SETS / candidate)])
    before = compile_policies([str(SETS / baseline)]) if baseline else None
    listed = anyio.run(replay, after, read_traffic(TRAFFIC), before, 3)
    streamed = anyio.run(replay, after, iter_traffic(TRAFFIC), before, 3)
    assert to_json(streamed, None) == to_json(listed, None)
    assert listed.messages == len(read_traffic(TRAFFIC))


def test_a_recorded_lone_surrogate_is_replayed_not_a_crash(tmp_path: Path) -> None:
    """A recording may hold what a hostile client sent, `\\ud800` included: the dedup
    digest must not raise on it (a traceback instead of a report)."""
    traffic = tmp_path / "odd.jsonl"
    line = '{"v":1,"event":"tools/call","phase":"request","side":"sending","decision":"allow",'
    line += '"payload":{"name":"read_file","arguments":{"path":"/tmp/\\ud800"}}}\n'
    traffic.write_text(line + line, encoding="utf-8")
    messages = list(iter_traffic(traffic))
    assert len(messages) == 1  # the duplicate is still dropped
    command = [sys.executable, "-m", "policy_engine.cli.main", "replay", str(SETS / "base")]
    done = subprocess.run(
        [*command, "--traffic", str(traffic), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "Traceback" not in done.stderr
    assert json.loads(done.stdout)["messages"] == 1

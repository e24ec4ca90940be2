"""SEP-2624 requirements of an interceptor server, over raw JSON-RPC lines on real processes.

`*` on the phase of its hook entry; the timeout MUSTs (cancelled, -32000,
logged); and the Information Disclosure mitigations: a failure reaches the
client as a generic message and the exception's type, its detail only the
server's log.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from raw_wire import exchange
from server_harness import FIXTURE, HERE, REPO

pytestmark = pytest.mark.e2e

SERVE = (sys.executable, "-m", "policy_engine.cli.main", "serve")
STAR = """validator star-watch "Sees every request" {
  on * request
  deny if $.name == "shell_exec" "no shell" code no-shell
}
"""


def _invoke(id_: int, name: str, event: str = "tools/call", **extra: Any) -> dict[str, Any]:
    params = {"name": name, "event": event, "phase": "request", "payload": {"name": "ls"}}
    params.update(extra)
    return {"jsonrpc": "2.0", "id": id_, "method": "interceptor/invoke", "params": params}


async def test_a_star_hook_fires_for_every_event_on_its_own_phase_only(tmp_path: Path) -> None:
    policy = tmp_path / "star.policy"
    policy.write_text(STAR)
    listing = {"jsonrpc": "2.0", "id": 9, "method": "interceptors/list"}
    messages = [
        _invoke(1, "star-watch", "tools/call"),
        _invoke(2, "star-watch", "custom/anything", payload={"name": "shell_exec"}),
        _invoke(3, "star-watch", "tools/call", phase="response"),
        {**listing, "params": {"event": "resources/read"}},
        {**listing, "id": 10, "params": {"event": "custom/anything"}},
    ]
    answers, _ = await exchange([*SERVE, str(policy)], messages, cwd=REPO)
    assert answers[1]["result"]["valid"] is True
    assert answers[2]["result"]["valid"] is False
    refused = answers[3]["error"]
    assert refused["code"] == -32602 and refused["data"]["reason"] == "event not hooked"
    for id_ in (9, 10):
        assert [d["name"] for d in answers[id_]["result"]["interceptors"]] == ["star-watch"]


async def test_a_timeout_is_cancelled_answered_with_32000_and_logged(tmp_path: Path) -> None:
    """The handler would sleep 60 s; the answer comes at `timeoutMs`, and the log has it."""
    log = tmp_path / "decisions.jsonl"
    slow = _invoke(1, "slow", timeoutMs=50, config={"delayMs": 60_000})
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    argv = [sys.executable, str(FIXTURE), "--decision-log", str(log)]
    answers, _ = await exchange(argv, [slow, ping], cwd=HERE, limit=30)
    assert answers[1]["error"] == {
        "code": -32000,
        "message": "Interceptor execution timeout",
        "data": {"interceptor": "slow", "timeoutMs": 50, "phase": "request", "reason": "timeout"},
    }
    assert answers[2]["result"] == {}
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(e["interceptor"], e["outcome"], e["errorCode"]) for e in entries] == [
        ("slow", "error", -32000)
    ]


async def test_a_failure_detail_reaches_only_the_server_log() -> None:
    """The crash's message stands for anything an exception may quote (the payload); a
    client that makes it fail again and again adds no log line per failure."""
    crashes = [_invoke(i, "crash") for i in range(1, 4)]
    answers, stderr = await exchange([sys.executable, str(FIXTURE)], crashes, HERE)
    for i in range(1, 4):
        error = answers[i]["error"]
        assert error["message"] == "Interceptor execution failed"
        assert error["data"] == {"interceptor": "crash", "reason": "RuntimeError"}
    assert "evaluation blew up" not in json.dumps(answers)
    assert stderr.count("RuntimeError: evaluation blew up") == 1
    assert "interceptor `crash` failed with RuntimeError" in stderr

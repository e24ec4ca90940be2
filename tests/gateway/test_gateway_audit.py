"""The gateway's decision log holds against a client that tries to wipe or forge it,
and never holds a secret a mutator let through.

The attack this answers: 730 requests with 1 MB method names rotated a blocked
`shell_exec` out of the six log files in 50 s, because the method name went
into each line uncut. Now every client-chosen field is capped, a session over
its line budget is counted instead of written (its refusals compactly), and
control characters in client-chosen names can forge no line in any log.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from gateway_harness import (
    ROOT,
    Wire,
    gateway_client,
    gateway_process_argv,
    recorder,
    text_of,
)

from policy_engine.gateway.decision_log import GatewayDecisionLog, SessionBudget
from policy_engine.interception import ChainRun
from policy_engine.server.decision_log import DecisionLog
from policy_engine.wire import ChainExecutionResult

pytestmark = pytest.mark.e2e

LIMIT = 120
# The secret redactor hooks every event (`on * both`), so every method is on record.
POLICIES = [ROOT / "policies" / "tool-guard.policy", ROOT / "policies" / "secrets.policy"]
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "hostile", "version": "0"},
}


def request(request_id: int, method: str, params: dict[str, Any] | None = None) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}}
    return json.dumps(message).encode()


async def flood(log: Path, *extra: str, lines: list[bytes], stderr: Path | None = None) -> None:
    """The shipped tool guard and secret redactor in front of the recorder; ``lines``
    sent after a blocked ``shell_exec``, each request answered before the next goes."""
    argv = gateway_process_argv(
        "--backend",
        recorder(log.with_suffix(".calls")),
        "--decision-log",
        str(log),
        *extra,
        policies=POLICIES,
    )
    err = stderr.open("wb") if stderr is not None else subprocess.DEVNULL
    try:
        process = await anyio.open_process(argv, cwd=str(ROOT), stderr=err)
        async with process:
            wire = Wire(process)
            await wire.send(request(0, "initialize", INIT))
            await wire.reply_to(0)
            await wire.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
            shell = {"name": "shell_exec", "arguments": {"command": "rm -rf /"}}
            await wire.send(request(1, "tools/call", shell))
            assert (await wire.reply_to(1))["error"]["code"] == -32602
            for line in lines:
                await wire.send(line)
                request_id = json.loads(line).get("id")
                if request_id is not None:
                    await wire.reply_to(request_id)
            assert process.stdin is not None
            await process.stdin.aclose()
            with anyio.move_on_after(10):
                await process.wait()
            if process.returncode is None:
                process.kill()
    finally:
        if stderr is not None:
            err.close()  # type: ignore[union-attr]


async def test_huge_method_names_cannot_push_a_blocked_call_out_of_the_log(
    tmp_path: Path,
) -> None:
    log = tmp_path / "decisions.jsonl"
    huge = [request(i, "x" * 200_000 + str(i)) for i in range(2, 62)]
    with anyio.fail_after(LIMIT):
        await flood(log, lines=huge)
    text = log.read_text(encoding="utf-8")
    records = [json.loads(line) for line in text.splitlines()]
    blocked = [r for r in records if r["event"] == "tools/call" and r["decision"] != "success"]
    assert blocked and blocked[0]["abortedAt"] == "tool-guard"
    flooded = [r for r in records if r["event"].startswith("xxx")]
    assert flooded, "every request is still on record"
    assert all(len(r["event"]) == 256 and "event" in r["truncated"] for r in flooded)
    # 60 requests of 200 KB each wrote 12 MB of log before; now a few hundred bytes each.
    assert max(len(line) for line in text.splitlines()) < 4096
    assert len(text) < 300_000


async def test_control_characters_in_names_forge_no_line(tmp_path: Path) -> None:
    log = tmp_path / "decisions.jsonl"
    stderr = tmp_path / "stderr.txt"
    forged = '\n{"decision":"success","event":"tools/call"}\n\x1b[2J\x9b31m\u2028'
    lines = [
        request(2, "evil" + forged),
        request(3, "tools/call", {"name": "tool" + forged, "arguments": {}}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/x" + forged}).encode(),
        request(4, "ping"),
    ]
    with anyio.fail_after(LIMIT):
        await flood(log, "--verbose", lines=lines, stderr=stderr)
    for path in (log, stderr):
        raw = path.read_bytes()
        assert b"\x1b" not in raw and b"\xc2\x9b" not in raw and b"\xe2\x80\xa8" not in raw, path
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert all("time" in r and "sessionId" in r for r in records)  # none forged
    assert any(r["event"].startswith("evil\n") for r in records)  # kept, as an escaped string
    for line in stderr.read_text(encoding="utf-8", errors="replace").splitlines():
        assert not line.startswith('{"decision"'), line  # no forged line on the terminal


def _run(session: str, status: str, event: str = "tools/call") -> ChainRun:
    result = ChainExecutionResult.model_validate(
        {
            "status": status,
            "event": event,
            "phase": "request",
            "results": [],
            "validationSummary": {"errors": 0, "warnings": 0, "infos": 0},
            "totalDurationMs": 0.1,
            **(
                {
                    "abortedAt": {
                        "interceptor": "tool-guard",
                        "reason": "denied",
                        "type": "validation",
                    }
                }
                if status != "success"
                else {}
            ),
        }
    )
    return ChainRun(event, "request", "sending", "client", "rec", session, result, None)


def test_one_session_over_its_budget_cannot_push_out_another_sessions_decisions(
    tmp_path: Path,
) -> None:
    path = tmp_path / "decisions.jsonl"
    log = GatewayDecisionLog(DecisionLog(str(path)), budget=SessionBudget(burst=5, per_second=0))
    for _ in range(1000):
        log(_run("hostile", "success", "x" * 1000))
    log(_run("hostile", "validation_failed"))
    log(_run("victim", "validation_failed"))
    log.close()
    records = [json.loads(line) for line in path.read_text().splitlines()]
    hostile = [r for r in records if r["sessionId"] == "hostile"]
    assert len(hostile) == 6  # the burst, then its refusal, compactly
    assert hostile[-1] == {**hostile[-1], "compact": True, "abortedAt": "tool-guard"}
    victim = [r for r in records if r["sessionId"] == "victim"]
    assert len(victim) == 1 and victim[0]["abortedAt"] == "tool-guard"
    assert "interceptors" in victim[0]  # in full
    assert path.stat().st_size < 20_000


def test_a_complete_log_has_no_budget(tmp_path: Path) -> None:
    path = tmp_path / "decisions.jsonl"
    log = GatewayDecisionLog.open(str(path), complete=True)
    for _ in range(3000):
        log(_run("busy", "success"))
    log.close()
    assert len(path.read_text().splitlines()) == 3000


CARD_ONLY = """mutator card-mask {
  on * both
  redact $ matching CREDIT_CARD
}
"""


async def test_log_payloads_never_holds_a_secret_a_mutator_let_through(tmp_path: Path) -> None:
    """The log holds the payload after redaction, and the built-in secret and card
    patterns masked on top: a policy that hides only the card cannot leak the rest."""
    policy = tmp_path / "card.policy"
    policy.write_text(CARD_ONLY, encoding="utf-8")
    log = tmp_path / "decisions.jsonl"
    stripe = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
    text = f"card 4111 1111 1111 1111, mail jane.doe@example.com, key {stripe}"
    args = ["--backend", recorder(tmp_path / "calls.log"), "--decision-log", str(log)]
    with anyio.fail_after(LIMIT):
        async with gateway_client(*args, "--log-payloads", policies=[policy]) as client:
            answer = text_of(await client.call_tool("echo", {"text": text}))
    # The policy decides what the client sees: only the card is redacted there.
    assert "4111" not in answer and "jane.doe@example.com" in answer and stripe in answer
    raw = log.read_text(encoding="utf-8")
    assert "jane.doe@example.com" not in raw and stripe not in raw and "4111" not in raw
    logged = [json.loads(line) for line in raw.splitlines()]
    calls = [r for r in logged if r["event"] == "tools/call" and "payload" in r]
    assert {r["phase"] for r in calls} == {"request", "response"}
    request = next(r for r in calls if r["phase"] == "request")
    assert request["payload"]["arguments"]["text"] == (
        "card [REDACTED:CREDIT_CARD], mail [MASKED:EMAIL], key [MASKED:STRIPE_KEY]"
    )

"""`policyc gateway --decision-log --log-payloads`: the log holds no secret a policy let through.

The PII pack redacts the e-mail address and passes the GitHub token on (it is
not personal data); the message reaches the backend so, but the log writes
the payload redacted of every secret and personal-data pattern (SEP-2624:
payloads logged with PII redaction; organizations MUST keep PII out of logs).
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from gateway_harness import ROOT, calls, local_client, recorder, text_of

pytestmark = pytest.mark.e2e

TOKEN = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
TEXT = f"mail ada@example.com token {TOKEN}"


async def test_logged_payloads_are_redacted(tmp_path: Path) -> None:
    decisions = tmp_path / "decisions.jsonl"
    backend_log = tmp_path / "calls.log"
    args = ("--backend", recorder(backend_log), "--decision-log", str(decisions), "--log-payloads")
    with anyio.fail_after(60):
        async with local_client(*args, policies=[ROOT / "policies" / "pii.policy"]) as client:
            answer = text_of(await client.call_tool("echo", {"text": TEXT}))
    assert TOKEN in answer and "ada@example.com" not in answer
    assert calls(backend_log)[0]["arguments"]["text"] == f"mail [REDACTED:EMAIL] token {TOKEN}"
    written = decisions.read_text()
    runs = [json.loads(line) for line in written.splitlines()]
    assert {(r["event"], r["phase"]) for r in runs} >= {("tools/call", "request")}
    assert all("payload" in r for r in runs if r["decision"] == "success")
    assert TOKEN not in written and "ada@example.com" not in written
    assert "[MASKED:GITHUB_TOKEN]" in written

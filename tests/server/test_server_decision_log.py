"""One JSON line per invoke; payloads only on request, only after mutation, and redacted."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.stdio import stdio_client as sdk_stdio_client
from mcp.shared.exceptions import MCPError
from server_harness import REPO, invoke, stdio_client

from policy_engine.chain import RemoteProvider, ServerSpec
from policy_engine.wire import InvokeParams, MutationResult

pytestmark = pytest.mark.e2e

SECRET = "sk_live_do_not_log"


async def _invoke_mix(log: Path, *extra: str) -> list[dict[str, object]]:
    context = {"traceId": "trace-1", "sessionId": "session-9"}
    payload = {"name": "echo", "arguments": {"note": "hello", "token": SECRET}}
    with anyio.fail_after(30):
        async with stdio_client("--decision-log", str(log), *extra) as client:
            await invoke(client, name="allow-all", payload=payload, context=context)
            await invoke(client, name="deny-all", payload=payload, phase="response")
            await invoke(client, name="uppercase-note", payload=payload, context=context)
            with pytest.raises(MCPError):
                await invoke(client, name="crash", payload=payload)
            with pytest.raises(MCPError):
                await invoke(client, name="nope", payload=payload)
    return [json.loads(line) for line in log.read_text().splitlines()]


async def test_decision_log_lines_without_payloads(tmp_path: Path) -> None:
    log = tmp_path / "decisions.jsonl"
    entries = await _invoke_mix(log)
    assert [(e["interceptor"], e["outcome"]) for e in entries] == [
        ("allow-all", "valid"),
        ("deny-all", "invalid"),
        ("uppercase-note", "modified"),
        ("crash", "error"),
        ("nope", "error"),
    ]
    first = entries[0]
    assert set(first) == {
        "time",
        "interceptor",
        "event",
        "phase",
        "outcome",
        "durationMs",
        "traceId",
        "sessionId",
    }
    assert (first["event"], first["phase"], first["traceId"], first["sessionId"]) == (
        "tools/call",
        "request",
        "trace-1",
        "session-9",
    )
    assert str(first["time"]).endswith("Z")
    assert isinstance(first["durationMs"], float | int)
    assert entries[1]["severity"] == "error"
    assert (entries[3]["errorCode"], entries[4]["errorCode"]) == (-32603, -32602)
    assert SECRET not in log.read_text()


async def test_without_a_redactor_no_payload_is_written(tmp_path: Path) -> None:
    """A server built on the API with payloads asked for but no redactor: fail closed."""
    log = tmp_path / "decisions.jsonl"
    entries = await _invoke_mix(log, "--include-payloads")
    assert not [e for e in entries if "payload" in e]
    omitted = [e["interceptor"] for e in entries if "payloadOmitted" in e]
    assert omitted == ["uppercase-note"]
    assert SECRET not in log.read_text()


SERVE = (sys.executable, "-m", "policy_engine.cli.main", "serve")
PACKS = [REPO / "policies" / "pii.policy", REPO / "policies" / "secrets.policy"]
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
EMAIL = "jane.roe@example.com"
SSN = "SSN 078-05-1120"


async def test_logged_payloads_hold_no_secret_or_personal_data(tmp_path: Path) -> None:
    """`policyc serve --log-payloads`: each mutator removes one kind of data and passes
    the other through; the log must hold neither (SEP: payloads with PII redaction)."""
    log = tmp_path / "decisions.jsonl"
    text = f"mail {EMAIL} token {GITHUB} {SSN}"
    payload = {"name": "echo", "arguments": {"text": text}}
    argv = (*SERVE, *map(str, PACKS), "--decision-log", str(log), "--log-payloads")
    with anyio.fail_after(60):
        async with RemoteProvider(ServerSpec(command=argv, cwd=str(REPO))) as server:
            for name in ("pii-redactor", "secret-redactor"):
                params = {"name": name, "event": "tools/call", "phase": "request"}
                result = await server.invoke(
                    InvokeParams.model_validate({**params, "payload": payload})
                )
                # The wire answer is the mutator's own: one kind of data is still in it.
                assert isinstance(result, MutationResult)
                assert (GITHUB in str(result.payload)) != (EMAIL in str(result.payload))
    written = log.read_text()
    entries = [json.loads(line) for line in written.splitlines()]
    assert [e["interceptor"] for e in entries] == ["pii-redactor", "secret-redactor"]
    assert all("payload" in e for e in entries)
    for value in (GITHUB, EMAIL, "078-05-1120"):
        assert value not in written
    logged = [e["payload"]["arguments"]["text"] for e in entries]
    assert all("[MASKED:GITHUB_TOKEN]" in t or "[SECRET:GITHUB_TOKEN]" in t for t in logged)


CARD_ONLY = "mutator card-mask {\n  on tools/call request\n  redact $ matching CREDIT_CARD\n}\n"


async def test_log_payloads_masks_the_secrets_a_mutator_let_through(tmp_path: Path) -> None:
    """`policyc serve --log-payloads`: the logged payload is the mutator's output with
    the built-in secret and card patterns masked again, never a key in clear."""
    policy = tmp_path / "card.policy"
    policy.write_text(CARD_ONLY, encoding="utf-8")
    log = tmp_path / "decisions.jsonl"
    argv = ["-m", "policy_engine.cli.main", "serve", str(policy), "--decision-log", str(log)]
    params = StdioServerParameters(command=sys.executable, args=[*argv, "--log-payloads"])
    stripe = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
    text = f"card 4111 1111 1111 1111, mail jane.doe@example.com, key {stripe}"
    payload = {"name": "echo", "arguments": {"text": text}}
    with anyio.fail_after(60):
        async with Client(sdk_stdio_client(params)) as client:
            result = await invoke(
                client, name="card-mask", event="tools/call", phase="request", payload=payload
            )
    assert stripe in json.dumps(result)  # the policy decides what the caller gets back
    raw = log.read_text(encoding="utf-8")
    assert stripe not in raw and "jane.doe@example.com" not in raw and "4111" not in raw
    logged = json.loads(raw.splitlines()[-1])["payload"]["arguments"]["text"]
    assert logged == "card [REDACTED:CREDIT_CARD], mail [MASKED:EMAIL], key [MASKED:STRIPE_KEY]"

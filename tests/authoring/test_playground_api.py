"""The playground's JSON API over a real `policyc playground` process on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from policy_engine.authoring.playground.app import MAX_BODY_BYTES, create_app

from .playground_process import start_playground, stop

CASES = json.loads((Path(__file__).parent / "playground_requests.json").read_text("utf-8"))["cases"]

POLICY = """\
validator guard {
  on tools/call request
  deny tools ["shell_exec"] "tool is blocked" code blocked-tool
}

mutator scrub {
  on tools/call request
  redact $.arguments matching EMAIL
}
"""


async def post(url: str, body: Any, headers: dict[str, str] | None = None) -> httpx2.Response:
    sent = {"Origin": url, "Content-Type": "application/json", **(headers or {})}
    with anyio.fail_after(30):
        async with httpx2.AsyncClient(timeout=30) as http:
            return await http.post(f"{url}/api/run", content=json.dumps(body), headers=sent)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
async def test_refused_requests(playground_url: str, case: dict[str, Any]) -> None:
    headers = {k: v.replace("{origin}", playground_url) for k, v in case["headers"].items()}
    body = case["body"]
    if body == "oversized":
        content = b"x" * (MAX_BODY_BYTES + 1)
    else:
        content = (body if isinstance(body, str) else json.dumps(body)).encode()
    with anyio.fail_after(30):
        async with httpx2.AsyncClient(timeout=30) as http:
            reply = await http.post(f"{playground_url}/api/run", content=content, headers=headers)
    assert reply.status_code == case["status"]
    assert reply.json()["error"]["code"] == case["code"]
    assert "SECRET-TOKEN" not in reply.text


async def test_page_and_init(playground_url: str) -> None:
    with anyio.fail_after(30):
        async with httpx2.AsyncClient(timeout=30) as http:
            page = await http.get(f"{playground_url}/")
            init = (await http.get(f"{playground_url}/api/init")).json()
    assert page.status_code == 200
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert list(init["files"]) == ["example.policy"]
    assert set(init["examples"]) == {
        "tools/call request",
        "tools/call response",
        "tools/list response",
        "sampling/createMessage request",
        "elicitation/create request",
    }


async def test_every_example_runs_clean_against_the_shipped_policy(playground_url: str) -> None:
    with anyio.fail_after(60):
        async with httpx2.AsyncClient(timeout=30) as http:
            init = (await http.get(f"{playground_url}/api/init")).json()
    verdicts = {}
    for key, payload in init["examples"].items():
        event, phase = key.rsplit(" ", 1)
        reply = await post(
            playground_url,
            {"sources": init["files"], "event": event, "phase": phase, "payload": payload},
        )
        assert reply.status_code == 200, reply.text
        result = reply.json()
        assert result["diagnostics"] == []
        verdicts[key] = result["evaluation"]["status"]
    assert verdicts == {
        "tools/call request": "validation_failed",
        "tools/call response": "success",
        "tools/list response": "success",
        "sampling/createMessage request": "validation_failed",
        "elicitation/create request": "validation_failed",
    }


async def test_run_reports_what_check_and_eval_explain_report(playground_url: str) -> None:
    broken = POLICY.replace("EMAIL", "EMAL")
    reply = await post(
        playground_url,
        {"sources": {"p.policy": broken}, "event": "tools/call", "phase": "request", "payload": {}},
    )
    result = reply.json()
    assert result["evaluation"] is None
    (diagnostic,) = result["diagnostics"]
    assert diagnostic == {
        "code": "E103",
        "severity": "error",
        "message": "unknown pattern `EMAL`",
        "file": "p.policy",
        "line": 8,
        "column": 31,
        "endLine": 8,
        "endColumn": 35,
        "help": "did you mean `EMAIL`?",
    }

    payload = {"name": "search", "arguments": {"q": "mail ann@example.com"}}
    reply = await post(
        playground_url,
        {
            "sources": {"p.policy": POLICY},
            "event": "tools/call",
            "phase": "request",
            "payload": payload,
        },
    )
    evaluation = reply.json()["evaluation"]
    assert evaluation["status"] == "success"
    assert evaluation["finalPayload"] == {
        "name": "search",
        "arguments": {"q": "mail [REDACTED:EMAIL]"},
    }
    assert evaluation["explain"].startswith("tools/call request (sending): success")
    scrub = next(t for t in evaluation["trace"] if t["interceptor"] == "scrub")
    assert scrub["modified"] is True
    assert [(r["kind"], r["line"], r["fired"]) for r in scrub["rules"]] == [("redact", 8, True)]


async def test_evaluation_is_bounded_in_time() -> None:
    """The chain's own deadline stops a slow evaluation; the answer says so."""
    app = create_app({}, timeout_s=0.001, check_timeout_s=30)
    transport = httpx2.ASGITransport(app=app)
    text = " ".join(f"user{i}@example.com" for i in range(20000))
    body = {
        "sources": {"p.policy": POLICY},
        "event": "tools/call",
        "phase": "request",
        "payload": {"name": "search", "arguments": {"q": text}},
    }
    with anyio.fail_after(30):
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            reply = await http.post(
                "/api/run",
                content=json.dumps(body),
                headers={"Origin": "http://127.0.0.1", "Content-Type": "application/json"},
            )
    assert reply.status_code == 200, reply.text
    assert reply.json()["evaluation"]["status"] == "timeout", reply.text[:300]


async def test_given_files_are_preloaded(tmp_path: Path) -> None:
    (tmp_path / "b.policy").write_text(POLICY, encoding="utf-8")
    (tmp_path / "a_test.policy").write_text("# tests go here\n", encoding="utf-8")
    process, url = start_playground(str(tmp_path))
    try:
        with anyio.fail_after(30):
            async with httpx2.AsyncClient(timeout=30) as http:
                init = (await http.get(f"{url}/api/init")).json()
        assert init["files"] == {
            str(tmp_path / "a_test.policy"): "# tests go here\n",
            str(tmp_path / "b.policy"): POLICY,
        }
    finally:
        stop(process)


async def test_config_and_context_reach_the_policy(playground_url: str) -> None:
    policy = """\
validator guard {
  on tools/call request
  param blocked: list[string] = ["shell_exec"]
  deny if $.name in param.blocked "blocked by config" code configured
  deny if $.name == "deploy" and not "admin" in context.principal.claims.roles "admins only"
}
"""
    base = {"sources": {"p.policy": policy}, "event": "tools/call", "phase": "request"}
    search = {**base, "payload": {"name": "search", "arguments": {}}}
    assert (await post(playground_url, search)).json()["evaluation"]["allowed"] is True
    configured = {**search, "config": {"guard": {"blocked": ["search"]}}}
    evaluation = (await post(playground_url, configured)).json()["evaluation"]
    assert evaluation["allowed"] is False
    assert evaluation["result"]["abortedAt"]["reason"] == "blocked by config"

    deploy = {**base, "payload": {"name": "deploy", "arguments": {}}}
    admin = {"principal": {"type": "user", "id": "ann", "claims": {"roles": ["admin"]}}}
    guest = {"principal": {"type": "user", "id": "bob", "claims": {"roles": []}}}
    assert (await post(playground_url, {**deploy, "context": admin})).json()["evaluation"][
        "allowed"
    ] is True
    assert (await post(playground_url, {**deploy, "context": guest})).json()["evaluation"][
        "allowed"
    ] is False


async def test_a_flow_rule_without_a_session_judges_the_message_not_its_lack(
    playground_url: str,
) -> None:
    guard = (
        "validator guard {\n  on tools/call request\n  deny flow AWS_ACCESS_KEY across servers\n}\n"
    )
    payload = {"name": "search", "arguments": {"q": "nothing secret"}}
    body = {"sources": {"p.policy": guard}, "event": "tools/call", "phase": "request"}
    evaluation = (await post(playground_url, {**body, "payload": payload})).json()["evaluation"]
    assert evaluation["allowed"] is True
    assert "synthetic session" in evaluation["note"]


async def test_checking_is_bounded_in_time() -> None:
    """A set that takes long to check gets a 504 at the deadline, not a minutes-long wait."""
    app = create_app({}, check_timeout_s=0.05)
    transport = httpx2.ASGITransport(app=app)
    lines = [f'  deny if $.name == "n{i}" and $.arguments.a > {i} "m{i}"' for i in range(3000)]
    policy = "validator v {\n  on tools/call request\n" + "\n".join(lines) + "\n}\n"
    body = {"sources": {"p.policy": policy}, "event": "tools/call", "phase": "request"}
    with anyio.fail_after(30):
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            reply = await http.post(
                "/api/run",
                content=json.dumps(body),
                headers={"Origin": "http://127.0.0.1", "Content-Type": "application/json"},
            )
    assert reply.status_code == 504, reply.text[:300]
    assert reply.json()["error"] == {
        "code": "timeout",
        "message": "checking took longer than 0.05 s",
    }

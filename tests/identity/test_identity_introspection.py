"""Opaque tokens through RFC 7662 introspection at a real issuer on 127.0.0.1."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import httpx2
import pytest
from gateway_harness import ROOT, free_port, running
from issuer import Issuer, running_issuer

from policy_engine.server import AuthConfigError
from policy_engine.server.introspection import IntrospectionVerifier
from policy_engine.server.oauth import TokenRejected

pytestmark = pytest.mark.e2e

RESOURCE = "https://gateway.example/mcp"
ROLES = ROOT / "examples" / "identity" / "role-tools.policy"


def verifier(issuer: Issuer, secret: str = "client-secret") -> IntrospectionVerifier:
    return IntrospectionVerifier(
        issuer=issuer.url,
        resource=RESOURCE,
        url=f"{issuer.url}/introspect",
        client_id="policyc",
        client_secret=secret,
        refusal_ttl_s=60.0,
    )


async def test_opaque_tokens_are_checked_and_cached() -> None:
    with running_issuer() as issuer:
        check = verifier(issuer)
        await check.start()
        issuer.opaque["good"] = issuer.claims(RESOURCE, sub="alice", roles=["ops"])
        issuer.opaque["elsewhere"] = issuer.claims("https://other.example/mcp")
        issuer.opaque["unbound"] = issuer.claims(RESOURCE, aud=None)
        issuer.opaque["foreign"] = issuer.claims(RESOURCE, iss="https://evil.example")
        issuer.opaque["expired"] = issuer.claims(
            RESOURCE, exp=int(issuer.claims(RESOURCE)["iat"]) - 600
        )
        before = issuer.introspections
        for _ in range(3):
            principal = (await check.verify("good")).principal
            assert principal.id == "alice" and principal.claims is not None
            assert principal.claims["roles"] == ["ops"]
        assert issuer.introspections - before == 1
        for token, reason in [
            ("unknown", "not active"),
            ("elsewhere", "not issued for this resource"),
            ("unbound", "not issued for this resource"),
            ("foreign", "another issuer"),
            ("expired", "expired"),
        ]:
            for _ in range(3):  # a refusal is cached too: one question per bad token
                with pytest.raises(TokenRejected, match=reason):
                    await check.verify(token)
        assert issuer.introspections - before == 6


async def test_introspection_that_cannot_answer_refuses_to_start_and_then_fails_closed() -> None:
    with running_issuer() as issuer:
        with pytest.raises(AuthConfigError, match="does not answer"):
            await verifier(issuer, secret="wrong").start()
        check = verifier(issuer)
        await check.start()
        issuer.opaque["good"] = issuer.claims(RESOURCE)
        issuer.down = True
        with pytest.raises(TokenRejected, match="could not be checked"):
            await check.verify("good")
        issuer.down = False  # the failure was not cached
        assert (await check.verify("good")).principal.id == "alice"


async def test_serve_http_with_opaque_tokens(tmp_path: Path) -> None:
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    with running_issuer() as issuer:
        issuer.opaque["alice-token"] = issuer.claims(resource, roles=["ops"])
        argv = [
            sys.executable,
            *["-m", "policy_engine.cli.main", "serve", str(ROLES), "--http", f"127.0.0.1:{port}"],
            *["--auth-issuer", issuer.url, "--auth-resource", resource],
            *["--auth-introspection-url", f"{issuer.url}/introspect"],
            *["--auth-client-id", "policyc", "--auth-client-secret-env", "INTROSPECT_SECRET"],
        ]
        with (
            running(argv, port, env={"INTROSPECT_SECRET": "client-secret"}) as url,
            anyio.fail_after(60),
        ):
            async with httpx2.AsyncClient(timeout=30) as raw:
                ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
                accept = {"Accept": "application/json, text/event-stream"}
                bad = await raw.post(
                    url, json=ping, headers={**accept, "Authorization": "Bearer nope"}
                )
                assert bad.status_code == 401
                assert 'error="invalid_token"' in bad.headers["www-authenticate"]
                initialize = {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"},
                    },
                }
                good = await raw.post(
                    url, json=initialize, headers={**accept, "Authorization": "Bearer alice-token"}
                )
                assert good.status_code == 200

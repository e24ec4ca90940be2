"""``policyc serve --http`` as an OAuth resource server: the token names the principal."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from gateway_harness import ROOT, free_port, running
from issuer import running_issuer
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from server_harness import request

pytestmark = pytest.mark.e2e

ROLES = ROOT / "examples" / "identity" / "role-tools.policy"
LIMIT = 60
CALL = {"name": "lookup_user", "arguments": {"user": "jane"}}


@asynccontextmanager
async def client_as(url: str, token: str) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
    ):
        yield client


async def invoke(client: Client, context: dict[str, Any] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {
        "name": "role-tools",
        "event": "tools/call",
        "phase": "request",
        "payload": CALL,
    }
    if context is not None:
        params["context"] = context
    return await request(client, "interceptor/invoke", params)


async def test_serve_http_takes_the_principal_from_the_token(tmp_path: Path) -> None:
    decisions = tmp_path / "decisions.jsonl"
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    with running_issuer("EC") as issuer:
        argv = [
            sys.executable,
            *["-m", "policy_engine.cli.main", "serve", str(ROLES), "--http", f"127.0.0.1:{port}"],
            *["--auth-issuer", issuer.url, "--auth-resource", resource],
            *["--decision-log", str(decisions)],
        ]
        alice = issuer.mint(issuer.claims(resource, sub="alice", roles=["ops"]))
        bob = issuer.mint(issuer.claims(resource, sub="bob", roles=["dev"]))
        with running(argv, port) as url, anyio.fail_after(LIMIT):
            async with httpx2.AsyncClient(timeout=30) as raw:
                missing = await raw.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
                assert missing.status_code == 401
                assert 'resource_metadata="' in missing.headers["www-authenticate"]
                stranger = issuer.mint(issuer.claims("http://127.0.0.1:1/mcp", roles=["ops"]))
                other = await raw.post(
                    url,
                    json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                    headers={"Authorization": f"Bearer {stranger}"},
                )
                assert other.status_code == 401
                document = await raw.get(
                    f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp"
                )
                assert document.json()["resource"] == resource
            async with client_as(url, alice) as client:
                assert (await invoke(client))["valid"] is True
            async with client_as(url, bob) as client:
                assert (await invoke(client))["valid"] is False
                # Claiming to be alice in the context does not make bob alice.
                claimed = {
                    "principal": {"type": "user", "id": "alice", "claims": {"roles": ["ops"]}}
                }
                assert (await invoke(client, claimed))["valid"] is False
    lines = [json.loads(line) for line in decisions.read_text().splitlines()]
    assert [line["principal"] for line in lines] == ["alice", "bob", "bob"]
    assert [line["outcome"] for line in lines] == ["valid", "invalid", "invalid"]
    assert alice not in decisions.read_text()


async def test_serve_http_sessions_belong_to_their_subject() -> None:
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    with running_issuer() as issuer:
        argv = [
            sys.executable,
            *["-m", "policy_engine.cli.main", "serve", str(ROLES), "--http", f"127.0.0.1:{port}"],
            *["--auth-issuer", issuer.url, "--auth-resource", resource],
        ]
        alice = issuer.mint(issuer.claims(resource, sub="alice", roles=["ops"]))
        mallory = issuer.mint(issuer.claims(resource, sub="mallory"))
        accept = {"Accept": "application/json, text/event-stream"}
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
        with running(argv, port) as url, anyio.fail_after(LIMIT):
            async with httpx2.AsyncClient(timeout=30) as raw:
                opened = await raw.post(
                    url, json=initialize, headers={**accept, "Authorization": f"Bearer {alice}"}
                )
                session = opened.headers["mcp-session-id"]
                listing = {"jsonrpc": "2.0", "id": 2, "method": "interceptors/list", "params": {}}
                headers = {
                    **accept,
                    "Mcp-Session-Id": session,
                    "MCP-Protocol-Version": "2025-06-18",
                }
                hijack = await raw.post(
                    url, json=listing, headers={**headers, "Authorization": f"Bearer {mallory}"}
                )
                assert hijack.status_code == 404
                own = await raw.post(
                    url, json=listing, headers={**headers, "Authorization": f"Bearer {alice}"}
                )
                assert own.status_code == 200 and "role-tools" in own.text

"""The in-code server middleware takes its principal from the same resource server."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from gateway_harness import free_port, running, text_of
from issuer import running_issuer
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

pytestmark = pytest.mark.e2e

SERVER = Path(__file__).resolve().parent / "in_code_server.py"


@asynccontextmanager
async def client_as(url: str, token: str) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
    ):
        yield client


async def test_verified_principal_reaches_in_code_policies() -> None:
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    with running_issuer() as issuer:
        alice = issuer.mint(issuer.claims(resource, sub="alice", roles=["ops"]))
        bob = issuer.mint(issuer.claims(resource, sub="bob", roles=["dev"]))
        argv = [sys.executable, str(SERVER), issuer.url, resource, str(port)]
        with running(argv, port) as url, anyio.fail_after(60):
            async with client_as(url, alice) as client:
                result = await client.call_tool("lookup_user", {"user": "jane"})
                assert text_of(result) == "jane: found"
            async with client_as(url, bob) as client:
                with pytest.raises(MCPError) as refused:
                    await client.call_tool("lookup_user", {"user": "jane"})
                # The host lists first (the client never did): the list filter hides it.
                assert refused.value.data["validationErrors"][0]["interceptor"] == "role-tools-list"

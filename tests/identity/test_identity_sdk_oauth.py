"""The official SDK client's OAuth flow through the gateway: it meets the 401, follows
``resource_metadata`` to the authorization server, registers, authorizes with PKCE
for the gateway's resource, and calls tools as the user the server approved."""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import pytest
from gateway_harness import ROOT, calls, free_port, gateway_argv, recorder, running, text_of
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from mcp.shared.exceptions import MCPError
from pydantic import AnyUrl
from sdk_authorization_server import running_authorization_server

pytestmark = pytest.mark.e2e

ROLES = ROOT / "examples" / "identity" / "role-tools.policy"


class Memory:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


def oauth(url: str) -> OAuthClientProvider:
    """The SDK's OAuth client whose "browser" follows the authorization redirect."""
    redirected: list[AuthorizationCodeResult] = []

    async def open_browser(authorize_url: str) -> None:
        async with httpx2.AsyncClient(follow_redirects=False, timeout=30) as browser:
            answer = await browser.get(authorize_url)
        assert answer.status_code in (302, 303, 307), answer.text
        query = parse_qs(urlsplit(answer.headers["location"]).query)
        redirected.append(
            AuthorizationCodeResult(code=query["code"][0], state=query.get("state", [None])[0])
        )

    async def callback() -> AuthorizationCodeResult:
        return redirected.pop()

    return OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="policyc test",
            redirect_uris=[AnyUrl("http://127.0.0.1:9/callback")],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
        ),
        storage=Memory(),
        redirect_handler=open_browser,
        callback_handler=callback,
    )


@pytest.mark.parametrize(
    ("user", "roles", "allowed"), [("alice", ["ops"], True), ("bob", [], False)]
)
async def test_the_sdk_oauth_flow_through_the_gateway(
    tmp_path: Path, user: str, roles: list[str], allowed: bool
) -> None:
    log = tmp_path / "calls.log"
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    with running_authorization_server(user, roles, ["mcp:tools"]) as (issuer, provider):
        argv = [
            sys.executable,
            *gateway_argv(
                *["--http", f"127.0.0.1:{port}", "--backend", recorder(log)],
                *["--auth-issuer", issuer.url, "--auth-resource", resource],
                *["--auth-jwks-url", f"{issuer.url}jwks", "--auth-required-scope", "mcp:tools"],
                policies=[ROLES],
            ),
        ]
        with running(argv, port) as url, anyio.fail_after(90):
            async with (
                httpx2.AsyncClient(auth=oauth(url), timeout=30) as http,
                Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
            ):
                names = {tool.name for tool in (await client.list_tools()).tools}
                assert ("lookup_user" in names) is allowed
                if allowed:
                    assert "jane" in text_of(
                        await client.call_tool("lookup_user", {"user": "jane"})
                    )
                else:
                    with pytest.raises(MCPError):
                        await client.call_tool("lookup_user", {"user": "jane"})
    (claims,) = provider.issued
    assert claims["aud"] == resource and claims["sub"] == user
    assert [c["tool"] for c in calls(log)] == (["lookup_user"] if allowed else [])

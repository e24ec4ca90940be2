"""A real OAuth authorization server built on the MCP SDK's own support, on 127.0.0.1.

The SDK's routes (RFC 8414 metadata, dynamic client registration, /authorize
with PKCE, /token) over a provider that approves at once as a fixed user and
issues JWTs signed with the test issuer's key, for the resource the client
asked for (RFC 8707). The official SDK client's OAuth flow runs against it.
"""

from __future__ import annotations

import secrets
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
from issuer import Issuer, public_jwk
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.routes import create_auth_routes
from mcp.server.auth.settings import ClientRegistrationOptions
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route


class ApprovingProvider:
    """Every authorization request is approved as ``subject`` with ``roles``."""

    def __init__(self, issuer: Issuer, subject: str, roles: list[str]) -> None:
        self.issuer = issuer
        self.subject = subject
        self.roles = roles
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.issued: list[dict[str, Any]] = []

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        code = secrets.token_urlsafe(24)
        assert client.client_id is not None
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject=self.subject,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        del self.codes[authorization_code.code]
        claims = self.issuer.claims(
            authorization_code.resource or "",
            sub=self.subject,
            roles=self.roles,
            scope=" ".join(authorization_code.scopes),
            client_id=client.client_id,
        )
        self.issued.append(claims)
        return OAuthToken(
            access_token=self.issuer.mint(claims),
            token_type="Bearer",
            expires_in=600,
            scope=" ".join(authorization_code.scopes),
        )

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return None

    async def exchange_refresh_token(self, *args: Any) -> OAuthToken:
        # `load_refresh_token` finds none, so the SDK never gets this far.
        raise AssertionError("this test server issues no refresh tokens")

    async def load_access_token(self, token: str) -> AccessToken | None:
        return None

    async def revoke_token(self, token: Any) -> None:
        return None


@contextmanager
def running_authorization_server(
    subject: str, roles: list[str], scopes: list[str]
) -> Iterator[tuple[Issuer, ApprovingProvider]]:
    """The SDK authorization server and its JWKS; the issuer URL ends in ``/``, as the
    SDK's metadata writes it."""
    issuer = Issuer()
    issuer.add("k1")
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    issuer.port = sock.getsockname()[1]
    issuer.url = f"http://127.0.0.1:{issuer.port}/"
    provider = ApprovingProvider(issuer, subject, roles)

    async def jwks(request: Request) -> Response:
        return JSONResponse({"keys": [public_jwk("k1", issuer.keys["k1"])]})

    routes = create_auth_routes(
        provider,  # type: ignore[arg-type]
        AnyHttpUrl(issuer.url),
        client_registration_options=ClientRegistrationOptions(
            enabled=True, valid_scopes=scopes, default_scopes=scopes
        ),
    )
    app = Starlette(routes=[*routes, Route("/jwks", jwks)])
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield issuer, provider
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()

"""Static bearer-token auth for the HTTP transport.

An interceptor server sits on the request path of every tool call, so a
shared secret is the minimum between it and the rest of the network. The
check runs before the MCP layer sees the request: an unauthenticated caller
cannot open a session or learn which interceptors exist.
"""

from __future__ import annotations

import hmac
import json
import os

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from policy_engine.wire.errors import UNAUTHORIZED


class AuthConfigError(ValueError):
    """The token variable is missing or empty: refuse to start rather than serve open."""


def token_from_env(variable: str) -> str:
    token = os.environ.get(variable, "")
    if not token.strip():
        raise AuthConfigError(f"environment variable `{variable}` holds no bearer token")
    return token.strip()


def _presented_token(scope: Scope) -> str | None:
    header = Headers(scope=scope).get("authorization")
    if header is None:
        return None
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return None
    return value.strip()


class BearerTokenMiddleware:
    """Refuse HTTP requests without ``Authorization: Bearer <token>`` with 401."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        if not token:
            raise AuthConfigError("bearer token must not be empty")
        self._app = app
        self._token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        presented = _presented_token(scope)
        if presented is not None and hmac.compare_digest(presented.encode(), self._token):
            await self._app(scope, receive, send)
            return
        await self._refuse(send, missing=presented is None)

    @staticmethod
    async def _refuse(send: Send, *, missing: bool) -> None:
        challenge = (
            'Bearer realm="policyc"' if missing else 'Bearer realm="policyc", error="invalid_token"'
        )
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": None,
                "error": {
                    "code": UNAUTHORIZED,
                    "message": "Unauthorized",
                    "data": {
                        "reason": "missing bearer token" if missing else "invalid bearer token"
                    },
                },
            }
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", challenge.encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

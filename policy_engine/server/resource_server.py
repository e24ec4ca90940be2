"""The OAuth resource server in front of an HTTP MCP endpoint, as MCP authorization asks.

Outermost ASGI layer: it serves Protected Resource Metadata (RFC 9728) so a
client can discover the authorization server, answers a request without a
valid token with 401 and ``WWW-Authenticate: Bearer resource_metadata=...``
(403 ``insufficient_scope`` when a required scope is missing), and hands the
verified caller on as a :class:`~policy_engine.wire.Principal`: in the ASGI
scope (``scope["policyc.principal"]``, which the SDK passes to handlers as the
request) and in a context variable, which tasks started while serving the
request inherit. A session belongs to the subject that opened it: a request
naming another subject's session is answered as if the session did not exist.
The token itself goes no further than this layer.
"""

from __future__ import annotations

import json
import logging
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from policy_engine.wire import Principal
from policy_engine.wire.errors import INVALID_REQUEST, UNAUTHORIZED

from .auth import AuthConfigError
from .oauth import TokenRejected, TokenVerifier

logger = logging.getLogger("policyc.auth")

METADATA_PATH = "/.well-known/oauth-protected-resource"
SCOPE_KEY = "policyc.principal"
SESSION_HEADER = "mcp-session-id"
MAX_BOUND_SESSIONS = 4096
"""Session owners remembered; far above any front's session cap, and a session whose
owner was forgotten is refused (it re-initializes), never handed to someone else."""

_PRINCIPAL: ContextVar[Principal | None] = ContextVar("policyc_principal", default=None)


def current_principal() -> Principal | None:
    """The verified caller of the request being served (or that started this task)."""
    return _PRINCIPAL.get()


@contextmanager
def acting_as(principal: Principal | None) -> Iterator[None]:
    """Serve what runs inside as ``principal`` (stdio: the configured local principal)."""
    token = _PRINCIPAL.set(principal)
    try:
        yield
    finally:
        _PRINCIPAL.reset(token)


def principal_in(scope: Any) -> Principal | None:
    """The principal this layer put in an ASGI scope (or a Starlette request's scope)."""
    found = scope.get(SCOPE_KEY) if isinstance(scope, dict) else None
    return found if isinstance(found, Principal) else None


def verified_principal(ctx: Any) -> Principal | None:
    """The caller of an SDK request this layer verified: pass it as the in-code
    middleware's ``principal=`` (:mod:`policy_engine.integrations`)."""
    return principal_in(getattr(getattr(ctx, "request", None), "scope", None))


def metadata_url(resource: str) -> str:
    """RFC 9728 §3.1: the well-known path goes between the host and the resource's path."""
    parts = urlsplit(resource)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise AuthConfigError(f"resource URI `{resource}` is not an absolute http(s) URL")
    return f"{parts.scheme}://{parts.netloc}{METADATA_PATH}{parts.path.rstrip('/')}"


class ResourceServerMiddleware:
    """401/403 with the MCP challenge, or the request with its verified principal."""

    def __init__(self, app: ASGIApp, verifier: TokenVerifier, *, bind_sessions: bool = True):
        self._app = app
        self._verifier = verifier
        self._bind_sessions = bind_sessions
        self._metadata_url = metadata_url(verifier.resource)
        self._metadata = json.dumps(
            {
                "resource": verifier.resource,
                "authorization_servers": [verifier.issuer],
                "bearer_methods_supported": ["header"],
                **(
                    {"scopes_supported": list(verifier.required_scopes)}
                    if verifier.required_scopes
                    else {}
                ),
            }
        ).encode()
        self._owners: OrderedDict[str, str | None] = OrderedDict()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        path: str = scope["path"]
        if path == METADATA_PATH or path.startswith(METADATA_PATH + "/"):
            await self._serve_metadata(scope, send)
            return
        headers = Headers(scope=scope)
        token = _bearer(headers.get("authorization"))
        if token is None:
            await self._challenge(send, 401, None, "missing bearer token")
            return
        try:
            verified = await self._verifier.verify(token)
        except TokenRejected as rejected:
            logger.info("refused a bearer token: %s", rejected.reason)
            await self._challenge(send, rejected.status, rejected.error, rejected.reason)
            return
        except Exception as err:  # fail closed, and no traceback to the caller
            logger.warning("bearer token check failed: %s", type(err).__name__)
            await self._challenge(send, 401, "invalid_token", "token could not be verified")
            return
        principal = verified.principal
        session = headers.get(SESSION_HEADER)
        if self._bind_sessions and session is not None and not self._owned_by(session, principal):
            await _session_not_found(send)
            return
        scope[SCOPE_KEY] = principal
        if self._bind_sessions and session is None:
            send = self._recording_owner(send, principal)
        with acting_as(principal):
            await self._app(scope, receive, send)

    def _owned_by(self, session: str, principal: Principal) -> bool:
        if session not in self._owners:
            return False
        self._owners.move_to_end(session)
        return self._owners[session] == principal.id

    def _recording_owner(self, send: Send, principal: Principal) -> Send:
        """Remember who opened the session the response names."""

        async def recording(message: Message) -> None:
            if message["type"] == "http.response.start":
                issued = Headers(raw=message.get("headers", [])).get(SESSION_HEADER)
                if issued is not None:
                    self._owners[issued] = principal.id
                    self._owners.move_to_end(issued)
                    while len(self._owners) > MAX_BOUND_SESSIONS:
                        self._owners.popitem(last=False)
            await send(message)

        return recording

    async def _serve_metadata(self, scope: Scope, send: Send) -> None:
        if scope["method"] not in ("GET", "HEAD"):
            await _respond(send, 405, b'{"error": "method not allowed"}', [(b"allow", b"GET")])
            return
        await _respond(send, 200, self._metadata, [(b"cache-control", b"max-age=3600")])

    async def _challenge(self, send: Send, status: int, error: str | None, reason: str) -> None:
        parts = []
        if error is not None:
            parts += [f'error="{error}"', f'error_description="{reason}"']
        scopes = " ".join(self._verifier.required_scopes)
        if scopes and (error is None or error == "insufficient_scope"):
            parts.append(f'scope="{scopes}"')
        parts.append(f'resource_metadata="{self._metadata_url}"')
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": None,
                "error": {
                    "code": UNAUTHORIZED,
                    "message": "Unauthorized" if status == 401 else "Forbidden",
                    "data": {"reason": reason},
                },
            }
        ).encode()
        challenge = ("Bearer " + ", ".join(parts)).encode()
        await _respond(send, status, body, [(b"www-authenticate", challenge)])


def _bearer(header: str | None) -> str | None:
    if header is None:
        return None
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return None
    return value.strip()


async def _session_not_found(send: Send) -> None:
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": INVALID_REQUEST, "message": "Session not found"},
        }
    ).encode()
    await _respond(send, 404, body, [])


async def _respond(
    send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


__all__ = [
    "METADATA_PATH",
    "ResourceServerMiddleware",
    "acting_as",
    "current_principal",
    "metadata_url",
    "principal_in",
    "verified_principal",
]

"""The HTTP fronts without server-side sessions: ``--stateless``, and 2026-07-28 requests.

Both answer each POST on its own, through a :class:`SharedSession`, so any
replica behind a load balancer can answer any request.

- :class:`ModernFront`: a 2026-07-28 request is self-contained (its envelope in
  ``_meta``, no handshake, no session), checked with the SDK's own ladder.
  The protocol has no session, so flow rules see one session id for all such
  requests, :data:`SESSIONLESS` (stricter, never looser, than one per client).
- :class:`StatelessFront` (``--stateless``, 2025-era clients): ``initialize`` is
  answered from the gateway's own handshake with the backends, with an
  ``Mcp-Session-Id`` that is a nonce and its keyed signature. Any replica with
  the same key accepts it without having seen it, and it keys the session's
  flow state in the shared store. No stream outlives a request: a backend's
  requests to the client are refused, and subscriptions and log levels
  (which would act for every client of the shared connections) too.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Callable
from typing import Any

import anyio
from anyio.abc import TaskGroup
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER, check_accept_headers
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    MCP_PROTOCOL_VERSION_HEADER,
    InboundLadderRejection,
    classify_inbound_request,
    find_duplicated_routing_header,
    unsupported_protocol_version_rejection,
)
from mcp_types import (
    HEADER_MISMATCH,
    INVALID_REQUEST,
    PARSE_ERROR,
    JSONRPCRequest,
)
from mcp_types.version import LATEST_HANDSHAKE_VERSION
from pydantic import ValidationError
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from policy_engine import __version__
from policy_engine.flow import Fingerprinter
from policy_engine.interception import Interception
from policy_engine.server.resource_server import current_principal
from policy_engine.wire.constants import CANCELLED, INITIALIZE
from policy_engine.wire.errors import INTERNAL_ERROR

from .session import SessionOptions
from .shared import SharedSession, write_json

logger = logging.getLogger("policyc.gateway")

SESSIONLESS = "sessionless"
"""The session id flow rules see on 2026-07-28 requests (the protocol has none)."""
NEEDS_SESSION = frozenset(
    {"resources/subscribe", "resources/unsubscribe", "logging/setLevel", "subscriptions/listen"}
)
"""Methods that act for one client over time: no stream carries their notifications."""
_OWN_HANDSHAKE = {
    "protocolVersion": LATEST_HANDSHAKE_VERSION,
    # Roots declared so that a backend that limits itself by them (server-filesystem) asks,
    # and is refused, instead of falling back to its own directories unseen.
    "capabilities": {"roots": {}},
    "clientInfo": {"name": "policyc-gateway", "version": __version__},
}


class SessionSigner:
    """Session ids any replica can check: a nonce and its keyed hash (the fleet's key).

    Behind OAuth the hash covers the verified subject too: a session id is valid only
    with a token for the subject it was issued to, on every replica, with no state.
    """

    def __init__(self, key: Fingerprinter) -> None:
        self._key = key

    def _signature(self, nonce: str, owner: str | None) -> str:
        bound = "" if owner is None else "\x00owner\x00" + owner
        return self._key.of("mcp-session-id\x00" + nonce + bound)

    def issue(self, owner: str | None = None) -> str:
        nonce = secrets.token_hex(16)
        return f"{nonce}.{self._signature(nonce, owner)}"

    def valid(self, session_id: str, owner: str | None = None) -> bool:
        nonce, dot, signature = session_id.partition(".")
        if not dot or len(nonce) != 32 or not session_id.isascii():
            return False  # compare_digest raises on non-ASCII text: a client's 500
        return secrets.compare_digest(signature, self._signature(nonce, owner))


class SealedInputKeys:
    """Input request names that carry their method, sealed with the fleet's key together
    with the request that asked: an input response is checked under the method its name
    says, on any replica, and only on the retry of that request (see InputKeys)."""

    def __init__(self, key: Fingerprinter) -> None:
        self._key = key

    def _seal(self, key: str, method: str, session_id: str | None, request: str) -> str:
        return self._key.of(
            f"input-request\x00{session_id or ''}\x00{request}\x00{key}\x00{method}"
        )

    def seal(self, key: str, method: str, session_id: str | None, request: str) -> str:
        return f"{key}~{method}~{self._seal(key, method, session_id, request)}"

    def open(self, sealed: str, session_id: str | None, request: str) -> tuple[str, str] | None:
        parts = sealed.rsplit("~", 2)
        if len(parts) != 3:
            return None
        key, method, seal = parts
        if not secrets.compare_digest(seal, self._seal(key, method, session_id, request)):
            return None
        return key, method


def _rpc_error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


async def _reject(
    send: Send, status: int, request_id: Any, code: int, message: str, data: Any = None
) -> None:
    await write_json(send, _rpc_error(request_id, code, message, data), status)


async def _status(
    send: Send, status: int, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers or []})
    await send({"type": "http.response.body", "body": b""})


class _Front:
    """What both fronts check before a body is a request: Host/Origin, method, Accept, JSON."""

    def __init__(self, security: TransportSecuritySettings) -> None:
        self._security = TransportSecurityMiddleware(security)

    async def _decoded(
        self, scope: Scope, receive: Receive, send: Send
    ) -> tuple[Request, Any, bool] | None:
        request = Request(scope, receive)
        refused = await self._security.validate_request(request, is_post=request.method == "POST")
        if refused is not None:
            await refused(scope, receive, send)
            return None
        if request.method != "POST":
            await _status(send, 405, [(b"allow", b"POST")])
            return None
        has_json, has_sse = check_accept_headers(request)
        if not has_json:
            await _status(send, 406)
            return None
        try:
            decoded = json.loads(await request.body())
        except (ValueError, RecursionError):
            await _reject(send, 400, None, PARSE_ERROR, "Parse error")
            return None
        return request, decoded, has_sse


def _request_of(decoded: Any) -> JSONRPCRequest | None:
    if not isinstance(decoded, dict) or "method" not in decoded or "id" not in decoded:
        return None
    try:
        return JSONRPCRequest.model_validate(decoded)
    except ValidationError:
        return None


class ModernFront(_Front):
    """2026-07-28: one POST, one answer; one shared session, started at the first request."""

    def __init__(
        self,
        interception: Interception,
        options: Callable[[], SessionOptions],
        tg: TaskGroup,
        security: TransportSecuritySettings,
        input_keys: SealedInputKeys,
    ) -> None:
        super().__init__(security)
        self._interception = interception
        self._options = options
        self._tg = tg
        self._shared: SharedSession | None = None
        self._lock = anyio.Lock()
        self._input_keys = input_keys

    async def _session(self) -> SharedSession:
        async with self._lock:
            if self._shared is None or self._shared.ended.is_set():
                shared = SharedSession(self._interception, self._options(), self._input_keys)
                await self._tg.start(shared.run, _logged)
                self._shared = shared
            return self._shared

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        found = await self._decoded(scope, receive, send)
        if found is None:
            return
        request, decoded, has_sse = found
        if isinstance(decoded, dict) and "id" not in decoded:
            # The protocol has no client notifications over HTTP; acknowledged, dropped.
            version = request.headers.get(MCP_PROTOCOL_VERSION_HEADER, "")
            unsupported = unsupported_protocol_version_rejection(version)
            if unsupported is not None:
                await _ladder(send, None, unsupported)
            else:
                await _status(send, 202)
            return
        message = _request_of(decoded)
        if message is None:
            await _reject(send, 400, None, INVALID_REQUEST, "Body must be one JSON-RPC request")
            return
        duplicated = find_duplicated_routing_header(request.headers.items())
        if duplicated is not None:
            rejection = InboundLadderRejection(HEADER_MISMATCH, f"{duplicated} appears twice")
            await _ladder(send, message.id, rejection)
            return
        verdict = classify_inbound_request(decoded, headers=dict(request.headers))
        if isinstance(verdict, InboundLadderRejection):
            await _ladder(send, message.id, verdict)
            return
        if message.method in NEEDS_SESSION:
            await _needs_session(send, message, ERROR_CODE_HTTP_STATUS.get(INVALID_REQUEST, 400))
            return
        try:
            shared = await self._session()
        except Exception as err:
            logger.error("backends for 2026-07-28 requests could not be started: %s", err)
            data = {"reason": "the backends could not be started"}
            await _reject(send, 200, message.id, INTERNAL_ERROR, "Backend unavailable", data)
            return
        await shared.answer(
            message, SESSIONLESS, receive, send, sse=has_sse, statuses=ERROR_CODE_HTTP_STATUS
        )


class StatelessFront(_Front):
    """``--stateless`` for 2025-era clients: signed session ids, no server-side sessions."""

    def __init__(
        self,
        interception: Interception,
        options: SessionOptions,
        signer: SessionSigner,
        security: TransportSecuritySettings,
        input_keys: SealedInputKeys,
    ) -> None:
        super().__init__(security)
        self.shared = SharedSession(interception, options, input_keys)
        self._signer = signer
        self._handshake: dict[str, Any] | None = None

    async def start(self, tg: TaskGroup, on_end: Callable[[str], None]) -> None:
        """Connect the backends and shake hands with them once, for every client."""
        await tg.start(self.shared.run, on_end)
        session = self.shared.session
        self._handshake = await session.open_handshake(dict(_OWN_HANDSHAKE))
        await session.settle()
        logger.warning(
            "--stateless: client roots never reach the backends; a backend that asks for "
            "roots is refused (%s)",
            ", ".join(sorted(session.rootless)) or "none has asked yet",
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        found = await self._decoded(scope, receive, send)
        if found is None:
            return
        request, decoded, has_sse = found
        message = _request_of(decoded)
        if message is not None and message.method == INITIALIZE:
            assert self._handshake is not None
            issued = self._signer.issue(_owner())
            header = [(MCP_SESSION_ID_HEADER.encode(), issued.encode())]
            await write_json(
                send, {"jsonrpc": "2.0", "id": message.id, "result": self._handshake}, 200, header
            )
            return
        session_id: str | None = request.headers.get(MCP_SESSION_ID_HEADER)
        if session_id is None:
            await _reject(send, 400, None, INVALID_REQUEST, "Bad Request: Missing session ID")
            return
        if not self._signer.valid(session_id, _owner()):
            await _reject(send, 404, None, INVALID_REQUEST, "Session not found")
            return
        if isinstance(decoded, dict) and "id" not in decoded and "method" in decoded:
            if decoded["method"] == CANCELLED:
                params = decoded.get("params")
                if isinstance(params, dict) and isinstance(params.get("requestId"), str | int):
                    self.shared.cancel(session_id, params["requestId"])
            await _status(send, 202)  # other client notifications have no one to reach
            return
        if message is None:
            reason = "a stateless gateway sends no requests, so it takes no answers or batches"
            await _reject(send, 400, None, INVALID_REQUEST, "Invalid Request", {"reason": reason})
            return
        if message.method in NEEDS_SESSION:
            await _needs_session(send, message, 200)
            return
        await self.shared.answer(message, session_id, receive, send, sse=has_sse)


def _owner() -> str | None:
    """The verified subject of this request (``None`` without OAuth)."""
    principal = current_principal()
    return principal.id if principal is not None else None


async def _ladder(send: Send, request_id: Any, rejection: InboundLadderRejection) -> None:
    status = ERROR_CODE_HTTP_STATUS.get(rejection.code, 400)
    await _reject(send, status, request_id, rejection.code, rejection.message, rejection.data)


async def _needs_session(send: Send, message: JSONRPCRequest, status: int) -> None:
    reason = (
        f"{message.method} needs a session stream; this gateway answers each request on its own"
    )
    await _reject(send, status, message.id, INVALID_REQUEST, "Not supported", {"reason": reason})


def _logged(reason: str) -> None:
    logger.error("the shared backends for 2026-07-28 requests stopped: %s", reason)

"""What every HTTP request passes before the SDK sees it: body bounds and strict framing.

The SDK's streamable HTTP transport answers an oversized body with a
plain-text 413 at its own 4 MiB limit, accepts ``NaN`` and ``Infinity``,
treats a request whose id is ``null``, an object, an array or a boolean as a
notification (202, never evaluated), answers unparseable bodies with errors
that can quote the body, and compares ``Host`` case-sensitively. This
middleware reads the body itself, within ``max_body_bytes`` and
``body_timeout``, and runs it through the same ``decode_line`` as stdio, so
both transports answer a hostile message the same way, as JSON-RPC errors
with the id kept where it can be read. Only messages that pass reach the SDK.
"""

from __future__ import annotations

import anyio
from mcp_types import JSONRPCRequest
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from policy_engine.wire.errors import INVALID_REQUEST

from .framing import (
    TOO_LONG_ID_SCAN,
    FractionalIds,
    Rejected,
    decode_line,
    encode_message,
    rejection,
    too_long,
)
from .rejections import RejectionLog


class _TooLarge(Exception):
    def __init__(self, prefix: bytes) -> None:
        super().__init__()
        self.prefix = prefix


class _Disconnected(Exception):
    pass


async def send_error(send: Send, status: int, rejected: Rejected) -> None:
    body = rejected.reply.model_dump_json(by_alias=True, exclude_unset=True).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _lowercase_host(scope: Scope) -> Scope:
    """Host names (and the host in an Origin) are case-insensitive: compare them lowercased."""
    headers = scope["headers"]
    if not any(k in (b"host", b"origin") and v != v.lower() for k, v in headers):
        return scope
    lowered = [(k, v.lower() if k in (b"host", b"origin") else v) for k, v in headers]
    return {**scope, "headers": lowered}


def _declared_length(scope: Scope) -> int | None:
    for key, value in scope["headers"]:
        if key == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _read_body(receive: Receive, limit: int) -> bytes:
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Disconnected
        body += message.get("body", b"")
        if len(body) > limit:
            raise _TooLarge(bytes(body[:TOO_LONG_ID_SCAN]))
        if not message.get("more_body", False):
            return bytes(body)


class RequestGuard:
    """Bounds, reads and checks each POST body, then replays it to the SDK."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        max_body_bytes: int,
        body_timeout: float,
        rejections: RejectionLog,
    ) -> None:
        self._app = app
        self._max_body_bytes = max_body_bytes
        self._body_timeout = body_timeout
        self._rejections = rejections
        self._fractional_ids = FractionalIds()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        scope = _lowercase_host(scope)
        if scope["method"] != "POST":
            await self._app(scope, receive, send)
            return
        declared = _declared_length(scope)
        # A body declared too large is read no further than the bytes its id is looked for in.
        limit = TOO_LONG_ID_SCAN if declared and declared > self._max_body_bytes else None
        try:
            with anyio.fail_after(self._body_timeout):
                body = await _read_body(receive, limit or self._max_body_bytes)
        except _TooLarge as large:
            await self._too_large(send, large.prefix)
            return
        except _Disconnected:
            return
        except TimeoutError:
            if limit is not None:
                await self._too_large(send, b"")
                return
            self._rejections.note(
                "refused a body that was not received in time",
                f"limit {self._body_timeout:g} s (--body-timeout)",
            )
            slow = rejection(None, INVALID_REQUEST, "Invalid Request", "request body timed out")
            await send_error(send, 408, slow)
            return
        if limit is not None:  # the whole body was within the scan: smaller than declared
            await self._too_large(send, body)
            return
        decoded = decode_line(body, self._fractional_ids)
        if isinstance(decoded, Rejected):
            await send_error(send, 400, decoded)
            return
        alias: str | None = None
        if isinstance(decoded, JSONRPCRequest) and self._fractional_ids.owns(decoded.id):
            alias = str(decoded.id)
            body = encode_message(decoded).rstrip(b"\n")
        await self._replay(scope, receive, send, body, alias)

    async def _replay(
        self, scope: Scope, receive: Receive, send: Send, body: bytes, alias: str | None
    ) -> None:
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        if alias is None:
            await self._app(scope, replay, send)
            return
        ids = self._fractional_ids

        async def restoring_send(message: Message) -> None:
            if message["type"] == "http.response.body" and message.get("body"):
                message = {**message, "body": ids.restore(message["body"])}
            elif message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k != b"content-length"]
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self._app(scope, replay, restoring_send)
        finally:
            ids.forget(alias)

    async def _too_large(self, send: Send, prefix: bytes) -> None:
        limit = self._max_body_bytes
        self._rejections.note(
            "refused an oversized body", f"limit {limit} bytes (--max-payload-bytes plus 64 KiB)"
        )
        await send_error(send, 413, too_long(prefix, limit))

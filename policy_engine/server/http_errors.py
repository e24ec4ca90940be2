"""Better answers for HTTP bodies the SDK cannot parse.

The SDK's streamable HTTP transport answers a body it cannot take with HTTP
400 and an error that has no request id: -32700 for bad JSON, including JSON
nested too deep to parse, and -32602 with pydantic's text for valid JSON that
is not a JSON-RPC message. That text can quote the body back. This
middleware leaves the status alone and rewrites those error bodies the way
the stdio transport answers the same lines (see ``framing``): -32600 with the
id kept where it can be recovered, and no quoted input.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .framing import Rejected, decode_line

_REWRITTEN_CODES = frozenset({-32700, -32602})


def _sdk_refusal(body: bytes) -> bool:
    try:
        reply: Any = json.loads(body)
    except ValueError:
        return False
    error = reply.get("error") if isinstance(reply, dict) else None
    return (
        isinstance(error, dict)
        and reply.get("id") is None
        and error.get("code") in _REWRITTEN_CODES
        and str(error.get("message", "")).startswith(("Parse error", "Validation error"))
    )


class RequestErrorRewriter:
    """Rewrites the SDK's 400 replies to unparseable POST bodies."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self._app(scope, receive, send)
            return
        request_body: list[bytes] = []
        held: list[Message] = []

        async def recording_receive() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                request_body.append(message.get("body", b""))
            return message

        async def holding_send(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 400:
                held.append(message)
                return
            if not held:
                await send(message)
                return
            held.append(message)
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                await self._release(held, b"".join(request_body), send)

        await self._app(scope, recording_receive, holding_send)

    @staticmethod
    async def _release(held: list[Message], request_body: bytes, send: Send) -> None:
        start, *parts = held
        body = b"".join(part.get("body", b"") for part in parts)
        if _sdk_refusal(body):
            decoded = decode_line(request_body)
            if isinstance(decoded, Rejected):
                body = decoded.reply.model_dump_json(by_alias=True, exclude_unset=True).encode()
        headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        await send({**start, "headers": headers})
        await send({"type": "http.response.body", "body": body})

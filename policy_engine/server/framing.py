"""Turning one line of bytes into a JSON-RPC message, or into the error that answers it.

The SDK's stdio transport drops a line it cannot parse (not JSON, or nested
deeper than its parser allows) without a reply, so the client waits forever.
Here every line yields either a message for the SDK or an error response:
-32700 when the line is not JSON, -32600 when it is JSON but not a request we
can take (too deep, not a JSON-RPC object), with the request id kept whenever
it can be read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.shared.dispatcher import as_request_id, coerce_request_id
from mcp_types import ErrorData, JSONRPCError, JSONRPCMessage, JSONRPCNotification, RequestId
from pydantic import ValidationError

from policy_engine.wire.errors import INVALID_REQUEST, PARSE_ERROR

_WHITESPACE = b" \t\r\n"


@dataclass(frozen=True, slots=True)
class Rejected:
    """A line that gets an error reply instead of reaching the server."""

    reply: JSONRPCError


def rejection(request_id: RequestId | None, code: int, message: str, reason: str) -> Rejected:
    error = ErrorData(code=code, message=message, data={"reason": reason})
    return Rejected(JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


def _as_id(value: object) -> RequestId | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | str):
        return value
    return None


def decode_line(line: bytes) -> JSONRPCMessage | Rejected | None:
    """The message on ``line``, a rejection to send back, or ``None`` for a blank line."""
    if not line.strip(_WHITESPACE):
        return None
    try:
        return types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as exc:
        return _diagnose(line, exc)


def _diagnose(line: bytes, exc: ValidationError) -> Rejected | None:
    """Why the SDK's parser refused ``line``; only bad lines pay for this."""
    problems = exc.errors(include_url=False, include_input=False, include_context=False)
    if any(p["type"] == "json_invalid" and _TOO_DEEP in p["msg"] for p in problems):
        # Nested deeper than the parser's limit (about 200 levels): read the id
        # without recursing, then refuse the request rather than drop it.
        return rejection(
            scan_top_level_id(line[:_ID_SCAN_LIMIT]),
            INVALID_REQUEST,
            "Invalid Request",
            "nesting too deep",
        )
    if any(p["type"] == "json_invalid" for p in problems):
        return rejection(None, PARSE_ERROR, "Parse error", "not valid JSON")
    document: Any = json.loads(line)  # valid and shallow: the parser above accepted it
    if not isinstance(document, dict):
        reason = "batches are not supported" if isinstance(document, list) else "not a JSON object"
        return rejection(None, INVALID_REQUEST, "Invalid Request", reason)
    if "method" not in document and ("result" in document or "error" in document):
        return None  # a malformed response from the peer: JSON-RPC forbids answering it
    request_id = _as_id(document.get("id"))
    return rejection(request_id, INVALID_REQUEST, "Invalid Request", "not a JSON-RPC 2.0 message")


_TOO_DEEP = "recursion limit exceeded"
_ID_SCAN_LIMIT = 256 * 1024
"""The id is looked for in the first 256 KiB only, so a huge line cannot stall the loop."""


def scan_top_level_id(line: bytes) -> RequestId | None:
    """Read ``"id"`` from the outermost object without parsing the nested parts.

    Works on documents too deep for any recursive parser: it tracks only
    string boundaries and bracket depth, and decodes just the scalar value
    found after an ``"id"`` key at depth one.
    """
    text = line.decode("utf-8", errors="replace")
    depth = 0
    index = 0
    length = len(text)
    expecting_key = False
    while index < length:
        char = text[index]
        if char == '"':
            end = _string_end(text, index)
            if end < 0:
                return None
            if depth == 1 and expecting_key:
                key = text[index : end + 1]
                rest = text[end + 1 :].lstrip()
                if key == '"id"' and rest.startswith(":"):
                    return _scalar_id(rest[1:])
            expecting_key = False
            index = end + 1
            continue
        if char in "{[":
            depth += 1
            expecting_key = char == "{" and depth == 1
        elif char in "}]":
            depth -= 1
        elif char == "," and depth == 1:
            expecting_key = True
        index += 1
    return None


def _string_end(text: str, start: int) -> int:
    index = start + 1
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == '"':
            return index
        index += 1
    return -1


def _scalar_id(rest: str) -> RequestId | None:
    decoder = json.JSONDecoder()
    try:
        value, _ = decoder.raw_decode(rest.lstrip())
    except (ValueError, RecursionError):
        return None
    return _as_id(value)


def encode_message(message: JSONRPCMessage) -> bytes:
    """One wire line for ``message``; a result that cannot be written becomes -32603.

    Pydantic refuses to serialize very deep values; without this fallback the
    writer would die and the request would never be answered.
    """
    try:
        return message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
    except Exception as exc:
        request_id = getattr(message, "id", None)
        if request_id is None:
            raise
        error = ErrorData(
            code=-32603,
            message="Internal error",
            data={"reason": f"result could not be serialized ({type(exc).__name__})"},
        )
        fallback = JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
        return fallback.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"


def cancelled_request(message: JSONRPCMessage) -> RequestId | None:
    """The id a ``notifications/cancelled`` names, coerced for correlation, else ``None``."""
    if not isinstance(message, JSONRPCNotification) or message.method != "notifications/cancelled":
        return None
    request_id = as_request_id((message.params or {}).get("requestId"))
    return None if request_id is None else coerce_request_id(request_id)

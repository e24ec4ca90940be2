"""Turning one line of bytes into a JSON-RPC message, or into the error that answers it.

The SDK's stdio transport drops a line it cannot parse (not JSON, or nested
deeper than its parser allows) without a reply, so the client waits forever,
and it takes a request whose id is ``null``, an object, an array or a boolean
for a notification. Here every line yields either a message for the SDK or an
error response: -32700 when the line is not strict JSON (``NaN`` and
``Infinity`` included, see ``wire.json_text``), -32600 when it is JSON but not
a request we can take (too deep, not a JSON-RPC object, an invalid id),
-32602 when its params are not an object, with the request id kept whenever
it can be read. The HTTP transport runs bodies through the same function.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.shared.dispatcher import as_request_id, coerce_request_id
from mcp_types import ErrorData, JSONRPCError, JSONRPCMessage, JSONRPCNotification, RequestId
from pydantic import ValidationError

from policy_engine.wire.constants import CANCELLED
from policy_engine.wire.errors import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR
from policy_engine.wire.json_line import message_line
from policy_engine.wire.json_text import TOO_DEEP, InvalidText, JSONTextError, loads
from policy_engine.wire.unicode import is_text

_WHITESPACE = b" \t\r\n"


@dataclass(frozen=True, slots=True)
class Rejected:
    """A line that gets an error reply instead of reaching the server."""

    reply: JSONRPCError


def rejection(
    request_id: RequestId | None, code: int, message: str, reason: str, **extra: Any
) -> Rejected:
    error = ErrorData(code=code, message=message, data={"reason": reason, **extra})
    return Rejected(JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


def _as_id(value: object) -> RequestId | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | str):
        return value
    return None


class FractionalIds:
    """Stand-ins for request ids JSON-RPC allows but MCP's types cannot carry.

    JSON-RPC 2.0 lets an id be any number (``1.5``); the SDK's ``RequestId`` is
    ``int | str``. Such a request reaches the SDK under a string alias no client
    can guess (a per-transport random token), and the alias in the answer line
    is put back to the number the client sent. At most ``limit`` aliases are
    outstanding, so a client cannot grow the table without bound.
    """

    def __init__(self, limit: int = 4096) -> None:
        self._prefix = f"policyc-id:{secrets.token_hex(8)}:"
        self._quoted_prefix = b'"id":"' + self._prefix.encode()
        self._originals: dict[str, bytes] = {}
        self._next = 0
        self._limit = limit

    def alias(self, number: float) -> str | None:
        """A string id standing for ``number``; ``None`` when too many are outstanding."""
        if len(self._originals) >= self._limit:
            return None
        alias = f"{self._prefix}{self._next}"
        self._next += 1
        self._originals[alias] = json.dumps(number).encode()
        return alias

    def owns(self, request_id: object) -> bool:
        """Whether ``request_id`` is one of the stand-ins handed out and not yet answered."""
        return isinstance(request_id, str) and request_id in self._originals

    def forget(self, request_id: object) -> None:
        """Drop an alias whose request will not be answered (it was cancelled)."""
        if isinstance(request_id, str):
            self._originals.pop(request_id, None)

    def restore(self, line: bytes) -> bytes:
        """``line`` with an aliased ``"id"`` put back to the client's number."""
        if not self._originals:
            return line
        start = line.find(self._quoted_prefix)
        if start < 0:
            return line
        value_start = start + len(b'"id":')
        end = line.find(b'"', value_start + 1)
        original = self._originals.pop(line[value_start + 1 : end].decode(), None)
        if original is None:
            return line
        return line[:value_start] + original + line[end + 1 :]


def decode_line(
    line: bytes, fractional_ids: FractionalIds | None = None
) -> JSONRPCMessage | Rejected | None:
    """The message on ``line``, a rejection to send back, or ``None`` for a blank line.

    Without ``fractional_ids`` a request whose id has a fraction is refused
    (-32600) instead of answered.
    """
    if not line.strip(_WHITESPACE):
        return None
    try:
        document: Any = loads(line)
    except InvalidText as exc:
        return _not_text(exc)
    except JSONTextError as exc:
        if exc.reason == TOO_DEEP:
            # Nested deeper than the parser's limit (about 200 levels): read the id
            # without recursing, then refuse the request rather than drop it.
            request_id = scan_top_level_id(line[:_ID_SCAN_LIMIT])
            return rejection(request_id, INVALID_REQUEST, "Invalid Request", TOO_DEEP)
        return rejection(None, PARSE_ERROR, "Parse error", exc.reason)
    if isinstance(document, dict) and "method" in document and "id" in document:
        raw_id = document["id"]
        if isinstance(raw_id, float):
            alias = None if fractional_ids is None else fractional_ids.alias(raw_id)
            if alias is None:
                return rejection(None, INVALID_REQUEST, "Invalid Request", _FRACTIONAL_ID)
            document = {**document, "id": alias}
        elif _as_id(raw_id) is None:
            return rejection(None, INVALID_REQUEST, "Invalid Request", _BAD_ID)
    try:
        return types.jsonrpc_message_adapter.validate_python(document, by_name=False)
    except ValidationError:
        return _diagnose(document)


def _not_text(exc: InvalidText) -> Rejected:
    """A string that is not Unicode text (a lone surrogate): refused under the request's
    own id, -32602 inside ``params`` and -32600 elsewhere, naming the path only."""
    document = exc.document
    location = exc.bad.location
    request_id = None
    if isinstance(document, dict) and location[:1] != ("id",):
        request_id = _as_id(document.get("id"))
        if isinstance(request_id, str) and not is_text(request_id):
            request_id = None
    if location[:1] == ("params",) and request_id is not None:
        code, message = INVALID_PARAMS, "Invalid params"
    else:
        code, message = INVALID_REQUEST, "Invalid Request"
    return rejection(request_id, code, message, exc.reason, **exc.bad.where())


_BAD_ID = "id must be a string or a number"
_FRACTIONAL_ID = "fractional ids are not accepted here"


def _diagnose(document: Any) -> Rejected | None:
    """Why ``document`` is not a message we take; only bad lines pay for this."""
    if not isinstance(document, dict):
        reason = "batches are not supported" if isinstance(document, list) else "not a JSON object"
        return rejection(None, INVALID_REQUEST, "Invalid Request", reason)
    if "method" not in document and ("result" in document or "error" in document):
        return None  # a malformed response from the peer: JSON-RPC forbids answering it
    request_id = _as_id(document.get("id"))
    params = document.get("params")
    if (
        request_id is not None
        and document.get("jsonrpc") == "2.0"
        and isinstance(document.get("method"), str)
        and params is not None
        and not isinstance(params, dict)
    ):
        return rejection(request_id, INVALID_PARAMS, "Invalid params", "params must be an object")
    return rejection(request_id, INVALID_REQUEST, "Invalid Request", "not a JSON-RPC 2.0 message")


def too_long(prefix: bytes, max_bytes: int) -> Rejected:
    """-32600 for a message past the size limit, under its own id when the id is among
    the first `TOO_LONG_ID_SCAN` bytes (SDK clients write it before ``params``): an
    answer under ``null`` would leave the client waiting for its request forever."""
    request_id = scan_top_level_id(prefix[:TOO_LONG_ID_SCAN])
    return rejection(request_id, INVALID_REQUEST, "Invalid Request", TOO_LONG, maxBytes=max_bytes)


TOO_LONG = "message too long"
TOO_LONG_ID_SCAN = 4096
"""Bytes of an oversized message searched for its id: the scan runs in Python, so a
flood of oversized messages costs a few microseconds each, not the scan of a megabyte."""

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
    writer would die and the request would never be answered. orjson writes the
    line when it can (the same bytes, a fraction of the cost: ``wire.json_line``).
    """
    line = message_line(message)
    if line is not None:
        return line
    try:
        return message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
    except Exception as exc:
        request_id = getattr(message, "id", None)
        if request_id is None:
            raise
        error = ErrorData(
            code=INTERNAL_ERROR,
            message="Internal error",
            data={"reason": f"result could not be serialized ({type(exc).__name__})"},
        )
        fallback = JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
        return fallback.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"


def cancelled_request(message: JSONRPCMessage) -> RequestId | None:
    """The id a ``notifications/cancelled`` names, coerced for correlation, else ``None``."""
    if not isinstance(message, JSONRPCNotification) or message.method != CANCELLED:
        return None
    request_id = as_request_id((message.params or {}).get("requestId"))
    return None if request_id is None else coerce_request_id(request_id)

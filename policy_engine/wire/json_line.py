"""One JSON-RPC message as one line of JSON text, written by orjson.

The transports wrote every line through pydantic's ``model_dump_json``, whose
serializer infers the type of every value of an untyped ``params`` or
``result`` as it goes: on a 10 KB tool result that is several times orjson's
cost, paid on every message a gateway or a server forwards. The text is the
same: the same members in the same order (a member the message was not given
is left out, as ``exclude_unset`` leaves it out), compact separators, UTF-8
unescaped, and floats in the same shortest form (``tests/wire`` compares the two
serializers). Whatever orjson would write differently or refuses (a string that
is not Unicode text, an integer past 64 bits, a key that is not a string, a
datetime, a dataclass or a subclass of a builtin, nesting past its limit) gets
``None``, and the caller writes the line the old way, which settles the error
exactly as before.

Duck-typed on pydantic's model attributes, so the wire layer needs no MCP types.
"""

from __future__ import annotations

from typing import Any

import orjson

_OPTIONS = (
    orjson.OPT_APPEND_NEWLINE
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)
_MEMBERS = ("jsonrpc", "id", "method", "params", "result")
"""The members of a request, notification or response, in the order the models
declare them; an error (whose ``error`` is a model of its own) is left to pydantic."""


def message_line(message: Any) -> bytes | None:
    """``message`` (an MCP SDK ``JSONRPCRequest``, ``JSONRPCNotification`` or
    ``JSONRPCResponse``) as one line ending in a newline; ``None`` when only
    pydantic can tell how to write it."""
    fields = type(message).model_fields
    if "error" in fields:
        return None
    given = message.model_fields_set
    document = {name: getattr(message, name) for name in _MEMBERS if name in given}
    # A member with a default that was never set is left out, as pydantic's
    # ``exclude_unset`` does; a required member missing means a hand-built model,
    # which pydantic writes (or refuses) as before.
    if len(document) != len(fields) and any(
        name not in given and info.is_required() for name, info in fields.items()
    ):
        return None
    try:
        return orjson.dumps(document, option=_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return None


__all__ = ["message_line"]

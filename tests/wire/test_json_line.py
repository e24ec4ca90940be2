"""``wire.json_line`` writes the same bytes as pydantic's ``model_dump_json``, or
declines (``None``) and leaves the line to pydantic."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp_types import ErrorData, JSONRPCError, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

from policy_engine.wire.json_line import message_line

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=30,
)
_ids = st.integers(min_value=-(2**63), max_value=2**63 - 1) | st.text()


def _pydantic(message: Any) -> bytes:
    text: str = message.model_dump_json(by_alias=True, exclude_unset=True)
    return text.encode() + b"\n"


@settings(max_examples=300, deadline=None)
@given(request_id=_ids, result=st.dictionaries(st.text(), _values, max_size=5))
def test_a_response_is_written_as_pydantic_writes_it(request_id: Any, result: Any) -> None:
    message = JSONRPCResponse.model_construct(jsonrpc="2.0", id=request_id, result=result)
    assert message_line(message) == _pydantic(message)


@settings(max_examples=300, deadline=None)
@given(
    request_id=_ids,
    params=st.none() | st.dictionaries(st.text(), _values, max_size=5),
    method=st.text(min_size=1),
)
def test_requests_and_notifications_too(request_id: Any, params: Any, method: str) -> None:
    for message in (
        JSONRPCRequest(jsonrpc="2.0", id=request_id, method=method, params=params),
        JSONRPCNotification(jsonrpc="2.0", method=method, params=params),
    ):
        assert message_line(message) == _pydantic(message)


def test_a_member_never_set_is_left_out() -> None:
    message = JSONRPCRequest.model_construct(jsonrpc="2.0", id=1, method="ping")
    assert message_line(message) == b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    assert message_line(message) == _pydantic(message)


@pytest.mark.parametrize(
    "result",
    [
        {"text": "\ud800"},  # not Unicode text
        {"n": 2**64},  # past 64 bits
        {"when": datetime(2026, 1, 1, tzinfo=UTC)},  # pydantic has its own format
        {1: "a key that is not a string"},
    ],
)
def test_what_orjson_would_write_differently_is_left_to_pydantic(result: Any) -> None:
    message = JSONRPCResponse.model_construct(jsonrpc="2.0", id=1, result=result)
    assert message_line(message) is None


def test_an_error_is_left_to_pydantic() -> None:
    error = JSONRPCError(jsonrpc="2.0", id=1, error=ErrorData(code=-32603, message="x"))
    assert message_line(error) is None

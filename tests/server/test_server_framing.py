"""Reading a request id from a line no recursive parser can take."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from policy_engine.server.framing import scan_top_level_id

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=12,
)
ids = st.integers(min_value=-(2**53), max_value=2**53) | st.text()


@given(request_id=ids, params=json_values, before=st.booleans())
def test_the_top_level_id_is_found_wherever_it_sits(
    request_id: int | str, params: Any, before: bool
) -> None:
    fields: list[tuple[str, Any]] = [("jsonrpc", "2.0"), ("params", params)]
    fields.insert(1 if before else 2, ("id", request_id))
    line = json.dumps(dict(fields)).encode()
    assert scan_top_level_id(line) == request_id


def test_nested_ids_and_lookalike_strings_are_ignored() -> None:
    line = b'{"params": {"id": 1, "s": "\\", \\"id\\": 2"}, "x": "id", "id": 3}'
    assert scan_top_level_id(line) == 3
    assert scan_top_level_id(b'{"params": {"id": 1}}') is None
    assert scan_top_level_id(b'{"id": true}') is None
    assert scan_top_level_id(b'{"id": {"nested": 1}}') is None


def test_deep_documents_do_not_recurse() -> None:
    deep = b"[" * 20_000 + b"]" * 20_000
    assert scan_top_level_id(b'{"id": "deep", "params": ' + deep + b"}") == "deep"
    assert scan_top_level_id(b'{"params": ' + deep + b', "id": 8}') == 8

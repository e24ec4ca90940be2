"""Payload limits: nesting depth and (estimated) size, both -32602 before evaluation."""

from __future__ import annotations

import json
import math
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from policy_engine.compiler import Limits, compile_sources
from policy_engine.compiler.bounds import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_DEPTH,
    _walk_bounds,
    check_bounds,
)
from policy_engine.compiler.json_size import json_size
from policy_engine.wire.errors import INVALID_PARAMS, InterceptorError


def nested(depth: int, leaf: Any = 0) -> Any:
    value = leaf
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


def test_defaults() -> None:
    assert Limits() == Limits(DEFAULT_MAX_BYTES, DEFAULT_MAX_DEPTH)
    assert (DEFAULT_MAX_BYTES, DEFAULT_MAX_DEPTH) == (4 * 1024 * 1024, 64)


@pytest.mark.parametrize("limit", [1, 3, 64])
def test_depth_counts_containers_up_to_the_limit(limit: int) -> None:
    check_bounds(nested(limit), Limits(max_depth=limit), "i")
    with pytest.raises(InterceptorError) as raised:
        check_bounds(nested(limit + 1), Limits(max_depth=limit), "i")
    assert raised.value.code == INVALID_PARAMS
    assert raised.value.data == {
        "reason": f"payload nests deeper than the limit of {limit} levels",
        "interceptor": "i",
        "limit": "maxPayloadDepth",
        "maxDepth": limit,
    }


def test_scalars_do_not_add_depth() -> None:
    check_bounds({"a": {"b": "deep string"}}, Limits(max_depth=2), "i")
    check_bounds("just a string", Limits(max_depth=1), "i")
    check_bounds(None, Limits(max_depth=1), "i")


def test_a_deep_sibling_is_found_after_shallow_ones() -> None:
    payload = {"a": 1, "b": [1, 2, 3], "c": {"d": nested(10)}}
    with pytest.raises(InterceptorError):
        check_bounds(payload, Limits(max_depth=8), "i")


def test_a_hostile_depth_is_refused_without_recursion() -> None:
    payload: Any = 0
    for _ in range(100_000):
        payload = [payload]
    with pytest.raises(InterceptorError) as raised:
        check_bounds(payload, Limits(), "i")
    assert raised.value.data is not None
    assert raised.value.data["limit"] == "maxPayloadDepth"


def test_size_is_refused_well_over_and_accepted_well_under() -> None:
    limits = Limits(max_bytes=1000)
    check_bounds({"text": "x" * 500, "n": [1, 2, 3]}, limits, "i")
    with pytest.raises(InterceptorError) as raised:
        check_bounds({"text": "x" * 1500}, limits, "i")
    assert raised.value.code == INVALID_PARAMS
    assert raised.value.data == {
        "reason": "payload is larger than the limit of 1000 bytes",
        "interceptor": "i",
        "limit": "maxPayloadBytes",
        "maxBytes": 1000,
    }


def test_many_small_values_add_up() -> None:
    limits = Limits(max_bytes=1000)
    check_bounds(list(range(50)), limits, "i")
    with pytest.raises(InterceptorError):
        check_bounds(list(range(400)), limits, "i")
    with pytest.raises(InterceptorError):
        check_bounds({f"key{i}": None for i in range(200)}, limits, "i")


def test_the_size_is_the_compact_json_size_exactly() -> None:
    for size in (10, 100, 990, 991, 1200):
        payload = {"t": "y" * size}
        fits = len(json.dumps(payload, separators=(",", ":"))) <= 1000
        try:
            measured = check_bounds(payload, Limits(max_bytes=1000), "i")
        except InterceptorError:
            assert not fits
        else:
            assert fits and measured == json_size(payload)


def _depth(value: Any) -> int:
    if isinstance(value, dict | list):
        items = value.values() if isinstance(value, dict) else value
        return 1 + max((_depth(item) for item in items), default=0)
    return 0


# Strings full of what the depth reading must see past: brackets, quotes,
# backslashes (escaped or escaping), control characters, non-ASCII.
_TRICKY = st.text(alphabet='[]{}"\\\n\x00é😀ab:,', max_size=8)
_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TRICKY,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TRICKY, inner, max_size=4),
    max_leaves=30,
)


@given(_JSON, st.integers(0, 6))
def test_the_encoded_check_agrees_with_the_walk(payload: Any, max_depth: int) -> None:
    """Depth read from orjson's text, and the size, are those of the value itself."""
    limits = Limits(max_depth=max_depth)
    try:
        size = check_bounds(payload, limits, "i")
    except InterceptorError as error:
        assert error.data is not None and error.data["limit"] == "maxPayloadDepth"
        assert _depth(payload) > max_depth
        with pytest.raises(InterceptorError):
            _walk_bounds(payload, limits, "i")
    else:
        assert _depth(payload) <= max_depth
        assert size == json_size(payload) == len(orjson.dumps(payload))


@pytest.mark.parametrize(("max_depth", "refused"), [(199, True), (200, False), (1000, False)])
def test_a_high_limit_over_many_brackets_reads_the_depth_exactly(
    max_depth: int, refused: bool
) -> None:
    """A limit above orjson's own and more brackets than levels: read exactly."""
    payload = {"deep": nested(199), "wide": [[] for _ in range(100)]}
    assert _depth(payload) == 200
    if refused:
        with pytest.raises(InterceptorError) as raised:
            check_bounds(payload, Limits(max_depth=max_depth), "i")
        assert raised.value.data is not None
        assert raised.value.data["limit"] == "maxPayloadDepth"
    else:
        assert check_bounds(payload, Limits(max_depth=max_depth), "i") == json_size(payload)


def test_what_orjson_refuses_is_walked_and_measured_exactly() -> None:
    wide = {"t": "text", "n": 2**70}
    assert check_bounds(wide, Limits(), "i") == json_size(wide) > 0
    with pytest.raises(InterceptorError) as raised:
        check_bounds({"deep": nested(10), "big": 2**70}, Limits(max_depth=8), "i")
    assert raised.value.data is not None and raised.value.data["limit"] == "maxPayloadDepth"


@pytest.mark.parametrize(
    ("payload", "where"),
    [
        ({"t": "ok", "n": 2**70, "u": ["x", "\ud800 lone"]}, {"path": "$.u[1]"}),
        ({"args": {"\udfffkey": 1}}, {"path": "$.args", "in": "key"}),
        ("\udc00", {"path": "$"}),
    ],
)
def test_a_lone_surrogate_is_refused_by_its_path_never_its_text(
    payload: Any, where: dict[str, str]
) -> None:
    with pytest.raises(InterceptorError) as raised:
        check_bounds(payload, Limits(), "i")
    assert raised.value.code == -32602
    data = raised.value.data
    assert data is not None and {k: data.get(k) for k in where} == where
    assert data["field"] == "payload" and "lone" not in str(data) and "key" not in data["path"]


@pytest.mark.parametrize("payload", [{"a": None, "n": math.nan}, [None, [math.inf]], -math.inf])
def test_non_finite_numbers_are_refused_though_orjson_writes_them_as_null(payload: Any) -> None:
    with pytest.raises(InterceptorError) as raised:
        check_bounds(payload, Limits(), "i")
    assert raised.value.data is not None and raised.value.data["field"] == "payload"


POLICY = 'validator v {\n  on app/run request\n  deny if exists $..k "has k"\n}'


def test_policy_set_checks_bounds_before_evaluating() -> None:
    policy_set = compile_sources({"b.policy": POLICY}, Limits(max_bytes=10_000, max_depth=4))
    assert policy_set.limits == Limits(max_bytes=10_000, max_depth=4)
    ok = policy_set.invoke_sync("v", "app/run", "request", nested(4))
    assert ok.to_wire()["valid"] is False
    for payload in (nested(5), {"k": "z" * 20_000}):
        with pytest.raises(InterceptorError) as raised:
            policy_set.invoke_sync("v", "app/run", "request", payload)
        assert raised.value.code == INVALID_PARAMS
        assert raised.value.data is not None
        assert raised.value.data["interceptor"] == "v"


def test_bounds_come_after_name_hook_and_config_checks() -> None:
    policy_set = compile_sources({"b.policy": POLICY}, Limits(max_depth=1))
    deep = nested(3)
    with pytest.raises(InterceptorError) as raised:
        policy_set.invoke_sync("nope", "app/run", "request", deep)
    assert raised.value.data is not None
    assert raised.value.data["reason"] == "unknown interceptor"
    with pytest.raises(InterceptorError) as raised:
        policy_set.invoke_sync("v", "app/run", "response", deep)
    assert raised.value.data is not None
    assert raised.value.data["reason"] == "event not hooked"
    with pytest.raises(InterceptorError) as raised:
        policy_set.invoke_sync("v", "app/run", "request", deep, {"x": 1})
    assert raised.value.data is not None
    assert raised.value.data["field"] == "config.x"


@pytest.mark.parametrize("max_depth", [0, 3, 64])
def test_without_orjson_s_limit_the_depth_is_read_from_the_text(
    monkeypatch: pytest.MonkeyPatch, max_depth: int
) -> None:
    """Should an orjson release encode past the depth tried, the text is read."""
    from policy_engine.compiler import nesting

    monkeypatch.setattr(nesting, "_LIMIT", None)
    assert nesting.encode_within({"a": 1}, max_depth) is None
    limits = Limits(max_depth=max_depth)
    assert check_bounds(nested(max_depth), limits, "i") == json_size(nested(max_depth))
    with pytest.raises(InterceptorError) as raised:
        check_bounds(nested(max_depth + 1), limits, "i")
    assert raised.value.data is not None and raised.value.data["limit"] == "maxPayloadDepth"


def test_a_limit_past_orjson_s_own_is_walked() -> None:
    """orjson encodes 254 levels: past that only the walk can tell, both ways."""
    limits = Limits(max_depth=300)
    assert check_bounds(nested(300), limits, "i") == json_size(nested(300))
    with pytest.raises(InterceptorError):
        check_bounds(nested(301), limits, "i")


def test_the_wrappers_hold_no_payload_after_a_check() -> None:
    from policy_engine.compiler import nesting

    assert nesting._LIMIT is not None
    limits = Limits(max_depth=8)
    inner = nesting._WRAPPERS.get(nesting._LIMIT[0] - 8)[1]
    assert check_bounds({"ok": [1]}, limits, "i") == json_size({"ok": [1]})
    assert inner == [None]
    with pytest.raises(InterceptorError):
        check_bounds(nested(9), limits, "i")  # refused by orjson's limit
    assert inner == [None]
    assert check_bounds({"big": 2**70}, limits, "i") == json_size({"big": 2**70})  # walked
    assert inner == [None]


def test_threads_checking_at_once_each_measure_their_own_payload() -> None:
    import threading

    limits = Limits(max_depth=10)
    sizes: dict[int, list[int]] = {}

    def check(k: int) -> None:
        payload = {"k": "x" * k, "deep": nested(k % 10)}
        sizes[k] = [check_bounds(payload, limits, "i") for _ in range(200)]

    threads = [threading.Thread(target=check, args=(k,)) for k in range(1, 9)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for k, measured in sizes.items():
        assert set(measured) == {json_size({"k": "x" * k, "deep": nested(k % 10)})}

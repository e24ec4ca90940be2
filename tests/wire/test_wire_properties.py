"""Property tests: dumping a parsed wire object is a fixed point, and dumps stay lean.

For every generated input ``x``: ``to_wire(parse(to_wire(parse(x))))`` equals
``to_wire(parse(x))``; the dump parses back to an equal model; and the dump
writes out no defaults (no ``mode: "active"``, no ``failOpen: false``) and no
``null`` of its own. ``null`` may only appear inside opaque caller data
(payloads, suggestion values, ``info``, configs), which must come back exactly.

Inputs mix camelCase and snake_case field names, the legacy ``enforce`` mode,
int32 extremes and both forms of ``priorityHint``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from policy_engine.wire import (
    INT32_MAX,
    INT32_MIN,
    STANDARD_EVENTS,
    ChainExecutionResult,
    InterceptorDescriptor,
    InvokeParams,
    InvokeResult,
    MutationResult,
    ValidationResult,
    WireModel,
)

FAST = settings(max_examples=50, deadline=None)

# Keys whose value is caller data the model carries without looking inside.
OPAQUE_KEYS = frozenset(
    {"payload", "value", "info", "config", "configSchema", "claims", "interceptorState"}
    | {"finalPayload"}
)

INVOKE_RESULT = TypeAdapter[ValidationResult | MutationResult](InvokeResult)

phases = st.sampled_from(["request", "response"])
severities = st.sampled_from(["info", "warn", "error"])
names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz-/0123456789", min_size=1, max_size=12)
events = st.sampled_from([*STANDARD_EVENTS, "*", "tools/*", "custom/myOperation"])
int32 = st.one_of(
    st.sampled_from([INT32_MIN, INT32_MIN + 1, -1, 0, 1, INT32_MAX - 1, INT32_MAX]),
    st.integers(min_value=INT32_MIN, max_value=INT32_MAX),
)
priority_hints = st.one_of(
    int32,
    st.fixed_dictionaries({}, optional={"request": int32, "response": int32}),
)
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.text(max_size=8),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.text(max_size=6), inner, max_size=3),
    ),
    max_leaves=10,
)
json_objects = st.dictionaries(st.text(max_size=6), json_values, max_size=3)
durations = st.one_of(
    st.integers(min_value=0, max_value=10**6),
    st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False),
)


def spelled(draw: st.DrawFn, camel: str, snake: str) -> str:
    """Either wire spelling of a field: the models accept both on input."""
    return draw(st.sampled_from([camel, snake]))


def put_optional(draw: st.DrawFn, raw: dict[str, Any], key: str, values: Any) -> None:
    if draw(st.booleans()):
        raw[key] = draw(values)


@st.composite
def hooks(draw: st.DrawFn) -> dict[str, Any]:
    return {"events": draw(st.lists(events, min_size=1, max_size=3)), "phase": draw(phases)}


@st.composite
def descriptors(draw: st.DrawFn) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "name": draw(names),
        "type": draw(st.sampled_from(["validation", "mutation"])),
        "hooks": draw(st.lists(hooks(), min_size=1, max_size=3)),
    }
    put_optional(draw, raw, "version", st.sampled_from(["1.0.0", "2.1.0-rc.1"]))
    put_optional(draw, raw, "description", st.text(max_size=20))
    put_optional(draw, raw, "mode", st.sampled_from(["active", "audit", "enforce"]))
    put_optional(draw, raw, spelled(draw, "failOpen", "fail_open"), st.booleans())
    put_optional(draw, raw, spelled(draw, "priorityHint", "priority_hint"), priority_hints)
    if draw(st.booleans()):
        compat = {spelled(draw, "minProtocol", "min_protocol"): "2025-06-18"}
        put_optional(
            draw, compat, spelled(draw, "maxProtocol", "max_protocol"), st.just("2026-01-01")
        )
        raw["compat"] = compat
    put_optional(draw, raw, spelled(draw, "configSchema", "config_schema"), json_objects)
    return raw


@st.composite
def messages(draw: st.DrawFn) -> dict[str, Any]:
    raw: dict[str, Any] = {"message": draw(st.text(max_size=20)), "severity": draw(severities)}
    put_optional(draw, raw, "path", st.sampled_from(["arguments.note", "$.name", "params"]))
    return raw


def result_base(draw: st.DrawFn, result_type: str) -> dict[str, Any]:
    raw: dict[str, Any] = {"interceptor": draw(names), "type": result_type, "phase": draw(phases)}
    put_optional(draw, raw, spelled(draw, "durationMs", "duration_ms"), durations)
    put_optional(draw, raw, "info", json_objects)
    return raw


@st.composite
def validation_results(draw: st.DrawFn) -> dict[str, Any]:
    raw = result_base(draw, "validation")
    raw["valid"] = draw(st.booleans())
    put_optional(draw, raw, "severity", severities)
    put_optional(draw, raw, "messages", st.lists(messages(), max_size=3))
    suggestion = st.fixed_dictionaries({"path": st.text(max_size=8), "value": json_values})
    put_optional(draw, raw, "suggestions", st.lists(suggestion, max_size=2))
    return raw


@st.composite
def mutation_results(draw: st.DrawFn) -> dict[str, Any]:
    raw = result_base(draw, "mutation")
    raw["modified"] = draw(st.booleans())
    raw["payload"] = draw(json_values)
    return raw


@st.composite
def chain_entries(draw: st.DrawFn) -> dict[str, Any]:
    result_type = draw(st.sampled_from(["validation", "mutation"]))
    raw: dict[str, Any] = {
        "interceptor": draw(names),
        "type": result_type,
        "phase": draw(phases),
        spelled(draw, "durationMs", "duration_ms"): draw(durations),
    }
    if result_type == "mutation":
        raw["modified"] = draw(st.booleans())
        put_optional(draw, raw, "payload", json_values)
    else:
        raw["valid"] = draw(st.booleans())
        put_optional(draw, raw, "severity", severities)
        put_optional(draw, raw, "messages", st.lists(messages(), max_size=2))
    put_optional(draw, raw, "mode", st.just("audit"))
    put_optional(draw, raw, "info", json_objects)
    put_optional(draw, raw, "error", st.text(max_size=10))
    return raw


@st.composite
def chain_results(draw: st.DrawFn) -> dict[str, Any]:
    summary = {
        key: draw(st.integers(min_value=0, max_value=5)) for key in ("errors", "warnings", "infos")
    }
    raw: dict[str, Any] = {
        "status": draw(
            st.sampled_from(["success", "validation_failed", "mutation_failed", "timeout"])
        ),
        "event": draw(events),
        "phase": draw(phases),
        "results": draw(st.lists(chain_entries(), max_size=3)),
        spelled(draw, "validationSummary", "validation_summary"): summary,
        spelled(draw, "totalDurationMs", "total_duration_ms"): draw(durations),
    }
    put_optional(draw, raw, spelled(draw, "finalPayload", "final_payload"), json_objects)
    if draw(st.booleans()):
        raw[spelled(draw, "abortedAt", "aborted_at")] = {
            "interceptor": draw(names),
            "reason": draw(st.text(max_size=10)),
            "type": draw(st.sampled_from(["validation", "mutation", "timeout"])),
        }
    return raw


@st.composite
def invoke_params(draw: st.DrawFn) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "name": draw(names),
        "event": draw(events),
        "phase": draw(phases),
        "payload": draw(json_values),
    }
    put_optional(draw, raw, "config", json_objects)
    put_optional(draw, raw, spelled(draw, "timeoutMs", "timeout_ms"), st.integers(1, INT32_MAX))
    if draw(st.booleans()):
        context: dict[str, Any] = {}
        put_optional(draw, context, spelled(draw, "sessionId", "session_id"), names)
        put_optional(draw, context, spelled(draw, "traceId", "trace_id"), names)
        put_optional(draw, context, "timestamp", st.just("2025-11-04T15:29:00Z"))
        put_optional(
            draw,
            context,
            "principal",
            st.fixed_dictionaries(
                {"type": st.sampled_from(["user", "service", "anonymous"])},
                optional={"id": names, "claims": json_objects},
            ),
        )
        raw["context"] = context
    return raw


def assert_lean(dumped: Any, where: str = "$") -> None:
    """No defaults and no null outside opaque caller data, at any depth."""
    if isinstance(dumped, dict):
        assert dumped.get("mode") != "active", where
        assert dumped.get("failOpen") is not False, where
        for key, value in dumped.items():
            assert "_" not in key, f"snake_case key {key!r} at {where}"
            if key in OPAQUE_KEYS:
                continue
            assert value is not None, f"null at {where}.{key}"
            assert_lean(value, f"{where}.{key}")
    elif isinstance(dumped, list):
        for index, item in enumerate(dumped):
            assert item is not None, f"null at {where}[{index}]"
            assert_lean(item, f"{where}[{index}]")


def check_fixed_point(parse: Callable[[Any], WireModel], raw: dict[str, Any]) -> dict[str, Any]:
    first = parse(raw)
    once = first.to_wire()
    second = parse(once)
    assert second == first
    assert second.to_wire() == once
    assert_lean(once)
    return once


@FAST
@given(descriptors())
def test_descriptor_dump_is_a_fixed_point(raw: dict[str, Any]) -> None:
    once = check_fixed_point(InterceptorDescriptor.model_validate, raw)
    mode = "active" if raw.get("mode") in (None, "active", "enforce") else raw["mode"]
    assert once.get("mode", "active") == mode
    fail_open = raw.get("failOpen", raw.get("fail_open", False))
    assert once.get("failOpen", False) is fail_open
    hint = raw.get("priorityHint", raw.get("priority_hint"))
    assert once.get("priorityHint") == hint
    schema = raw.get("configSchema", raw.get("config_schema"))
    assert once.get("configSchema") == schema


@FAST
@given(st.one_of(validation_results(), mutation_results()))
def test_invoke_result_dump_is_a_fixed_point(raw: dict[str, Any]) -> None:
    once = check_fixed_point(INVOKE_RESULT.validate_python, raw)
    assert once["type"] == raw["type"]
    if raw["type"] == "mutation":
        # ``payload`` is required even when it is JSON null, and comes back intact.
        assert "payload" in once
        assert once["payload"] == raw["payload"]
    # Suggestion values are caller data too, null included.
    assert once.get("suggestions") == raw.get("suggestions")
    assert once.get("info") == raw.get("info")


@FAST
@given(chain_results())
def test_chain_result_dump_is_a_fixed_point(raw: dict[str, Any]) -> None:
    once = check_fixed_point(ChainExecutionResult.model_validate, raw)
    assert len(once["results"]) == len(raw["results"])
    assert all("durationMs" in entry for entry in once["results"])
    assert set(once["validationSummary"]) == {"errors", "warnings", "infos"}


@FAST
@given(invoke_params())
def test_invoke_params_dump_is_a_fixed_point(raw: dict[str, Any]) -> None:
    once = check_fixed_point(InvokeParams.model_validate, raw)
    assert "payload" in once
    assert once["payload"] == raw["payload"]

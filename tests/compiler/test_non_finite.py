"""NaN and +-Infinity are not JSON; a library caller can still hand them in.

Every comparison with NaN is false, so `deny if $.maxTokens > param.maxTokens`
would let `NaN` through; a mutator would hand it back as `null` once encoded.
The compiled set refuses them before any rule runs: -32602 naming the path.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from policy_engine.compiler import compile_policies, compile_sources
from policy_engine.wire.errors import INVALID_PARAMS, InterceptorError

POLICIES = Path(__file__).resolve().parents[2] / "policies"
NON_FINITE = [math.nan, math.inf, -math.inf]

MUTATOR = """mutator m {
  on tools/call request
  set $.arguments.seen = true
}
"""
CONTEXT_RULE = """validator v {
  on tools/call request
  deny if context.principal.claims.level > 3 "too high"
}
"""


@pytest.mark.parametrize("number", NON_FINITE, ids=repr)
def test_the_shipped_token_budget_refuses_non_finite_max_tokens(number: float) -> None:
    policies = compile_policies([POLICIES / "sampling-guard.policy"])
    payload = {"messages": [], "maxTokens": number, "modelPreferences": {}}
    with pytest.raises(InterceptorError) as raised:
        policies.invoke_sync("sampling-guard", "sampling/createMessage", "request", payload)
    assert raised.value.code == INVALID_PARAMS
    assert raised.value.data is not None
    assert raised.value.data["path"] == "$.maxTokens"
    assert raised.value.data["field"] == "payload"


@pytest.mark.parametrize("number", NON_FINITE, ids=repr)
def test_a_mutator_refuses_non_finite_rather_than_returning_null(number: float) -> None:
    policies = compile_sources({"m.policy": MUTATOR})
    payload: dict[str, Any] = {"name": "t", "arguments": {"odd key": [1, number]}}
    with pytest.raises(InterceptorError) as raised:
        policies.invoke_sync("m", "tools/call", "request", payload)
    assert raised.value.code == INVALID_PARAMS
    assert raised.value.data is not None
    assert raised.value.data["path"] == "$.arguments['odd key'][1]"


def test_non_finite_config_is_refused_naming_the_config() -> None:
    policies = compile_policies([POLICIES / "sampling-guard.policy"])
    payload = {"messages": [], "maxTokens": 10**9, "modelPreferences": {}}
    with pytest.raises(InterceptorError) as raised:
        policies.invoke_sync(
            "sampling-guard",
            "sampling/createMessage",
            "request",
            payload,
            config={"maxTokens": math.nan},
        )
    assert raised.value.code == INVALID_PARAMS
    assert raised.value.data is not None
    assert (raised.value.data["field"], raised.value.data["path"]) == ("config", "$.maxTokens")


def test_non_finite_context_is_refused_naming_the_context() -> None:
    policies = compile_sources({"v.policy": CONTEXT_RULE})
    with pytest.raises(InterceptorError) as raised:
        policies.invoke_sync(
            "v",
            "tools/call",
            "request",
            {"name": "t"},
            context={"principal": {"type": "user", "id": "u", "claims": {"level": math.nan}}},
        )
    assert raised.value.code == INVALID_PARAMS
    assert raised.value.data is not None
    assert raised.value.data["path"] == "$.principal.claims.level"


async def test_invoke_refuses_as_invoke_sync_does() -> None:
    from policy_engine.wire import InvokeParams

    policies = compile_policies([POLICIES / "sampling-guard.policy"])
    params = InvokeParams(
        name="sampling-guard",
        event="sampling/createMessage",
        phase="request",
        payload={"messages": [], "maxTokens": math.nan},
    )
    with pytest.raises(InterceptorError) as raised:
        await policies.invoke(params)
    assert raised.value.code == INVALID_PARAMS


def test_finite_numbers_still_compare() -> None:
    policies = compile_policies([POLICIES / "sampling-guard.policy"])
    over = {"messages": [], "maxTokens": 1e300, "modelPreferences": {}}
    result = policies.invoke_sync("sampling-guard", "sampling/createMessage", "request", over)
    assert result.to_wire()["valid"] is False


async def test_a_chain_s_context_is_checked_once_per_context_object(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A chain hands every invoke of a run the same context: its finite check is
    remembered for the run, and only for it."""
    from policy_engine.compiler import bounds, policy_set
    from policy_engine.wire import InvocationContext, RunState

    policies = compile_sources({"v.policy": CONTEXT_RULE})
    checks: list[object] = []
    original = bounds.check_finite

    def counting(value: object, *args: object) -> None:
        checks.append(value)
        original(value, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(policy_set, "check_finite", counting)
    context = InvocationContext.model_validate(
        {"principal": {"type": "user", "id": "u", "claims": {"level": 5}}}
    )
    run = RunState()
    for _ in range(3):
        result = await policies.invoke_fields(
            "v", "tools/call", "request", {"name": "t"}, None, None, context, run
        )
        assert result.valid is False  # type: ignore[union-attr]
    assert len(checks) == 1
    # Another run, or none, checks again: the caller may have changed the claims.
    await policies.invoke_fields(
        "v", "tools/call", "request", {"name": "t"}, None, None, context, RunState()
    )
    await policies.invoke_fields("v", "tools/call", "request", {"name": "t"}, None, None, context)
    assert len(checks) == 3
    # A dict context from a library caller may change between calls: checked each time.
    for _ in range(2):
        policies.invoke_sync("v", "tools/call", "request", {"name": "t"}, context={"a": 1})
    assert len(checks) == 5


@pytest.mark.parametrize(
    "context",
    [
        {"principal": {"type": "user", "claims": {"level": [1, math.nan]}}},
        {"interceptorState": {"budget": math.inf}},
        {"sessionId": "s", "vendor": {"score": -math.inf}},
    ],
    ids=["claims", "interceptor-state", "unknown-key"],
)
def test_a_typed_context_refuses_non_finite_numbers_when_built(context: dict[str, Any]) -> None:
    """The typed context is handed on as JSON, where pydantic writes NaN as `null`:
    a claim of NaN would reach the rule above as a quiet `null`, so the model
    refuses it when it is built instead."""
    from pydantic import ValidationError

    from policy_engine.wire import InvocationContext

    with pytest.raises(ValidationError, match="non-finite number"):
        InvocationContext.model_validate(context)


def test_a_typed_context_with_finite_claims_still_reaches_the_rule() -> None:
    from policy_engine.wire import InvocationContext

    policies = compile_sources({"v.policy": CONTEXT_RULE})
    context = InvocationContext.model_validate(
        {"principal": {"type": "user", "claims": {"level": 3.5}}, "vendor": {"x": 1.0}}
    )
    result = policies.invoke_sync("v", "tools/call", "request", {"name": "t"}, context=context)
    assert result.to_wire()["valid"] is False

"""The chain copies a payload only for providers that might modify it."""

from __future__ import annotations

from typing import Any

from policy_engine.chain import InterceptorChain
from policy_engine.compiler import compile_sources
from policy_engine.wire import (
    ChainExecutionParams,
    InterceptorDescriptor,
    InvokeParams,
    MutationResult,
    ValidationResult,
)
from policy_engine.wire.provider import UNKNOWN_TRAITS, ProviderTraits, traits_of

POLICY = "validator v {\n  on tools/call request\n  deny if false\n}\n"


class Recorder:
    """A provider that keeps the payload object it was given."""

    def __init__(self, promise: bool) -> None:
        if promise:
            self.traits = ProviderTraits(never_modifies_payload=True)
        self.seen: list[Any] = []

    def descriptors(self) -> list[InterceptorDescriptor]:
        return [
            InterceptorDescriptor.model_validate(
                {
                    "name": "r",
                    "type": "validation",
                    "hooks": [{"events": ["*"], "phase": "request"}],
                }
            )
        ]

    async def invoke(self, params: InvokeParams) -> ValidationResult | MutationResult:
        self.seen.append(params.payload)
        return ValidationResult(interceptor="r", phase="request", valid=True)


async def _run(provider: Any) -> Any:
    payload = {"name": "x", "arguments": {"a": [1, 2]}}
    async with InterceptorChain.connect(local=[provider]) as chain:
        params = ChainExecutionParams(event="tools/call", phase="request", payload=payload)
        await chain.execute(params, side="sending")
    return payload


async def test_a_provider_that_promises_gets_the_payload_itself() -> None:
    recorder = Recorder(promise=True)
    payload = await _run(recorder)
    assert recorder.seen[0] is payload


async def test_any_other_provider_gets_a_private_copy() -> None:
    recorder = Recorder(promise=False)
    payload = await _run(recorder)
    assert recorder.seen[0] == payload
    assert recorder.seen[0] is not payload
    assert recorder.seen[0]["arguments"] is not payload["arguments"]


def test_compiled_policies_make_the_promise() -> None:
    assert traits_of(compile_sources({"v.policy": POLICY})).never_modifies_payload
    assert traits_of(Recorder(promise=False)) == UNKNOWN_TRAITS
    assert not UNKNOWN_TRAITS.never_modifies_payload


def test_a_stray_attribute_is_no_promise() -> None:
    """Only a declared `ProviderTraits` counts: an attribute of the old name, or a
    `traits` of another type, promises nothing (the payload is copied)."""
    stray = Recorder(promise=False)
    stray.never_modifies_payload = True  # type: ignore[attr-defined]
    assert traits_of(stray) == UNKNOWN_TRAITS
    stray.traits = {"never_modifies_payload": True}  # type: ignore[attr-defined]
    assert traits_of(stray) == UNKNOWN_TRAITS

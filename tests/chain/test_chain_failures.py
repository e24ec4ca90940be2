"""Failure rules: atomic mutations, blocking, audit, failOpen, timeouts."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from policy_engine.chain import ChainEntry, Host, InterceptorChain
from policy_engine.wire import (
    ChainExecutionParams,
    InterceptorDescriptor,
    InterceptorError,
    InterceptorOverrides,
    InvokeParams,
    MutationResult,
    Side,
    ValidationResult,
)
from policy_engine.wire.errors import timed_out

from .providers import (
    ScriptedProvider,
    after,
    allow,
    append,
    crash,
    deny,
    entries,
    hang,
    mutator,
    signal,
    validator,
    verdict,
)

ORIGINAL = {"name": "echo", "trail": []}


def params(phase: str = "request", **extra: Any) -> ChainExecutionParams:
    return ChainExecutionParams.model_validate(
        {"event": "tools/call", "phase": phase, "payload": ORIGINAL, **extra}
    )


def overridden(built: list[ChainEntry], name: str, **fields: Any) -> list[ChainEntry]:
    """The same entries with ``fields`` as the invoker's overrides for ``name``."""
    return [
        ChainEntry(e.interceptor, e.host, InterceptorOverrides(**fields), e.config)
        if e.name == name
        else e
        for e in built
    ]


def by_name(result: Any) -> dict[str, Any]:
    return {r.interceptor: r for r in result.results}


async def run(provider: ScriptedProvider, side: Side = "sending", **extra: Any) -> Any:
    return await InterceptorChain(entries(provider)).execute(params(**extra), side=side)


# mutations


async def test_a_failing_mutator_aborts_with_no_partial_payload() -> None:
    provider = ScriptedProvider(
        "a",
        mutator("m1", append("m1"), priorityHint=1),
        mutator("m2", crash("mutator exploded"), priorityHint=2),
        mutator("m3", append("m3"), priorityHint=3),
        validator("check"),
    )
    result = await run(provider)

    assert result.status == "mutation_failed"
    assert result.final_payload is None and "finalPayload" not in result.to_wire()
    assert result.aborted_at is not None
    assert result.aborted_at.to_wire() == {
        "interceptor": "m2",
        "type": "mutation",
        "reason": "RuntimeError: mutator exploded",
    }
    # halted: neither the later mutator nor the (sending-side) validators ran
    assert provider.journal.started == ["m1@a", "m2@a"]
    assert [r.interceptor for r in result.results] == ["m1", "m2"]
    assert by_name(result)["m2"].error == "RuntimeError: mutator exploded"


async def test_a_fail_open_mutator_crash_is_recorded_and_skipped() -> None:
    provider = ScriptedProvider(
        "a",
        mutator("m1", append("m1"), priorityHint=1),
        mutator("m2", crash(), priorityHint=2, failOpen=True),
        mutator("m3", append("m3"), priorityHint=3),
    )
    result = await run(provider)

    assert result.status == "success" and result.aborted_at is None
    assert result.final_payload == {"name": "echo", "trail": ["m1", "m3"]}
    assert by_name(result)["m2"].error == "RuntimeError: boom"
    # m3 got m1's output: the crashed mutator changed nothing
    assert provider.journal.seen("m3@a").payload["trail"] == ["m1"]


async def test_an_unmodified_result_passes_the_input_on() -> None:
    async def in_place(p: InvokeParams) -> dict[str, Any]:
        p.payload["trail"].append("sneaky")
        return {"modified": False, "payload": {"something": "else"}}

    provider = ScriptedProvider("a", mutator("noop", in_place))
    result = await run(provider)
    assert result.final_payload == ORIGINAL
    assert ORIGINAL == {"name": "echo", "trail": []}


async def test_audit_mutator_output_is_recorded_but_never_applied() -> None:
    provider = ScriptedProvider(
        "a",
        mutator("m1", append("m1"), priorityHint=1),
        mutator("shadow", append("shadow"), priorityHint=2, mode="audit"),
        mutator("m3", append("m3"), priorityHint=3),
    )
    result = await run(provider)

    assert result.final_payload == {"name": "echo", "trail": ["m1", "m3"]}
    shadow = by_name(result)["shadow"]
    assert shadow.mode == "audit" and shadow.modified is True
    assert shadow.payload == {"name": "echo", "trail": ["m1", "shadow"]}
    assert provider.journal.seen("m3@a").payload["trail"] == ["m1"]
    assert "mode" not in by_name(result)["m1"].to_wire()


async def test_audit_mutator_failure_never_blocks_even_fail_closed() -> None:
    provider = ScriptedProvider(
        "a",
        mutator("shadow", crash(), mode="audit"),
        mutator("m", append("m"), priorityHint=1),
    )
    result = await run(provider)
    assert result.status == "success"
    assert result.final_payload["trail"] == ["m"]


# validations


async def test_an_error_verdict_blocks_after_every_validator_finished() -> None:
    denied = anyio.Event()
    provider = ScriptedProvider(
        "a",
        mutator("m", append("m")),
        validator("deny", signal(denied, deny("no way"))),
        # finishes only after the denial was produced: if the chain gave up on
        # the first error, this verdict would be missing
        validator("slowpoke", after(denied, allow())),
    )
    with anyio.fail_after(5):
        result = await run(provider)

    assert result.status == "validation_failed"
    assert result.final_payload is None
    assert result.aborted_at is not None
    assert result.aborted_at.to_wire() == {
        "interceptor": "deny",
        "type": "validation",
        "reason": "no way",
    }
    assert by_name(result)["slowpoke"].valid is True
    assert result.validation_summary.to_wire() == {"errors": 1, "warnings": 0, "infos": 0}


async def test_receiving_a_denied_payload_runs_no_mutator() -> None:
    provider = ScriptedProvider("a", validator("deny", deny()), mutator("m", append("m")))
    result = await run(provider, side="receiving", phase="response")
    assert result.status == "validation_failed"
    assert provider.journal.started == ["deny@a"]


async def test_invalid_without_severity_fails_secure() -> None:
    provider = ScriptedProvider("a", validator("quiet", verdict(valid=False)))
    result = await run(provider)
    assert result.status == "validation_failed"
    assert by_name(result)["quiet"].severity == "error"


@pytest.mark.parametrize("severity", ["warn", "info"])
async def test_only_error_severity_blocks(severity: str) -> None:
    provider = ScriptedProvider(
        "a",
        validator("invalid", verdict(valid=False, severity=severity)),
        validator("valid", verdict(valid=True, severity=severity)),
    )
    result = await run(provider)
    assert result.status == "success"
    assert result.final_payload == ORIGINAL
    summary = result.validation_summary
    counted = {"warn": summary.warnings, "info": summary.infos}
    assert counted[severity] == 2 and summary.errors == 0


async def test_audit_validator_never_blocks_but_is_counted() -> None:
    provider = ScriptedProvider("a", validator("watch", deny(), mode="audit"))
    result = await run(provider)
    assert result.status == "success"
    assert result.final_payload == ORIGINAL
    assert by_name(result)["watch"].mode == "audit"
    assert result.validation_summary.errors == 1


async def test_mode_override_turns_audit_into_blocking() -> None:
    provider = ScriptedProvider("a", validator("watch", deny(), mode="audit"))
    chain = InterceptorChain(overridden(entries(provider), "watch", mode="active"))
    result = await chain.execute(params(), side="sending")
    assert result.status == "validation_failed"


@pytest.mark.parametrize(
    ("fail_open", "status", "severity"),
    [(False, "validation_failed", "error"), (True, "success", "warn")],
)
async def test_a_crashing_validator_is_governed_by_fail_open(
    fail_open: bool, status: str, severity: str
) -> None:
    provider = ScriptedProvider("a", validator("fragile", crash(), failOpen=fail_open))
    result = await run(provider)
    assert result.status == status
    entry = by_name(result)["fragile"]
    assert entry.error == "RuntimeError: boom" and entry.severity == severity
    summary = result.validation_summary
    assert (summary.errors, summary.warnings) == ((0, 1) if fail_open else (1, 0))


async def test_fail_open_override_beats_the_declared_default() -> None:
    provider = ScriptedProvider("a", validator("fragile", crash()))
    chain = InterceptorChain(overridden(entries(provider), "fragile", fail_open=True))
    assert (await chain.execute(params(), side="sending")).status == "success"


async def test_a_denial_outranks_a_crash_when_reporting_the_abort() -> None:
    provider = ScriptedProvider("a", validator("a-crash", crash()), validator("b-deny", deny()))
    result = await run(provider)
    assert result.aborted_at is not None and result.aborted_at.interceptor == "b-deny"


class WrongTypeProvider:
    """Declares a validator but answers with a mutation result."""

    def descriptors(self) -> list[InterceptorDescriptor]:
        return [validator("liar").descriptor]

    async def invoke(self, params: InvokeParams) -> ValidationResult | MutationResult:
        return MutationResult(interceptor="liar", phase="request", modified=False, payload={})


async def test_a_result_of_the_wrong_type_counts_as_a_crash() -> None:
    provider = WrongTypeProvider()
    (descriptor,) = provider.descriptors()
    chain = InterceptorChain([ChainEntry(descriptor, Host("x", provider))])
    result = await chain.execute(params(), side="sending")
    assert result.status == "validation_failed"
    assert by_name(result)["liar"].error == (
        "returned a mutation result for a validation interceptor"
    )


# timeouts


async def test_interceptor_timeout_aborts_fail_closed() -> None:
    cancelled = anyio.Event()
    provider = ScriptedProvider("a", validator("stuck", hang(cancelled)), validator("ok"))
    chain = InterceptorChain(overridden(entries(provider), "stuck", timeout_ms=20))
    with anyio.fail_after(5):
        result = await chain.execute(params(), side="sending")

    assert cancelled.is_set()
    assert result.status == "timeout"
    assert result.aborted_at is not None
    assert result.aborted_at.to_wire() == {
        "interceptor": "stuck",
        "type": "timeout",
        "reason": "timed out after 20 ms",
        "timeoutMs": 20,
    }
    assert by_name(result)["ok"].valid is True


async def test_chain_default_timeout_applies_and_fail_open_lets_it_pass() -> None:
    cancelled = anyio.Event()
    provider = ScriptedProvider(
        "a", mutator("stuck", hang(cancelled), failOpen=True), mutator("m", append("m"))
    )
    chain = InterceptorChain(entries(provider), default_timeout_ms=20)
    with anyio.fail_after(5):
        result = await chain.execute(params(), side="sending")
    assert cancelled.is_set()
    assert result.status == "success"
    assert result.final_payload["trail"] == ["m"]
    assert by_name(result)["stuck"].error == "timed out after 20 ms"


async def test_a_timeout_error_from_the_host_counts_as_a_timeout() -> None:
    async def host_timeout(p: InvokeParams) -> dict[str, Any]:
        raise timed_out("slow", 40, "request")

    provider = ScriptedProvider("a", mutator("slow", host_timeout))
    result = await run(provider)
    assert result.status == "timeout"
    assert result.aborted_at is not None and result.aborted_at.timeout_ms == 40


async def test_an_interceptor_error_reason_is_reported() -> None:
    async def refuse(p: InvokeParams) -> dict[str, Any]:
        raise InterceptorError(-32603, "Interceptor execution failed", {"reason": "bad config"})

    provider = ScriptedProvider("a", mutator("picky", refuse))
    result = await run(provider)
    assert result.aborted_at is not None
    assert result.aborted_at.reason == "Interceptor execution failed: bad config"


async def test_chain_timeout_cancels_every_validator_in_flight() -> None:
    first, second = anyio.Event(), anyio.Event()
    provider = ScriptedProvider(
        "a",
        mutator("m", append("m")),
        validator("fast"),
        validator("slow-1", hang(first)),
        validator("slow-2", hang(second), failOpen=True),
    )
    with anyio.fail_after(5):
        result = await run(provider, timeoutMs=50)

    assert first.is_set() and second.is_set()
    assert result.status == "timeout" and result.final_payload is None
    assert result.aborted_at is not None
    assert result.aborted_at.to_wire() == {
        "interceptor": "slow-1",
        "type": "timeout",
        "reason": "chain timeout after 50 ms",
        "timeoutMs": 50,
    }
    entries_by_name = by_name(result)
    assert entries_by_name["fast"].valid is True
    assert entries_by_name["slow-2"].error == "cancelled: chain timeout after 50 ms"
    assert [r.interceptor for r in result.results] == ["m", "fast", "slow-1", "slow-2"]


async def test_chain_timeout_during_mutation_keeps_no_payload() -> None:
    cancelled = anyio.Event()
    provider = ScriptedProvider(
        "a", mutator("m", append("m")), mutator("stuck", hang(cancelled), priorityHint=1)
    )
    with anyio.fail_after(5):
        result = await run(provider, timeoutMs=30)
    assert cancelled.is_set()
    assert result.status == "timeout" and result.final_payload is None
    assert result.aborted_at is not None and result.aborted_at.interceptor == "stuck"


@pytest.mark.parametrize("bad", [0, -5, 2.5, True, "100", 2**31])
def test_a_default_timeout_no_invoke_could_carry_is_refused_at_set_up(bad: Any) -> None:
    from policy_engine.chain.errors import ChainConfigError

    with pytest.raises(ChainConfigError, match="default_timeout_ms"):
        InterceptorChain([], default_timeout_ms=bad)

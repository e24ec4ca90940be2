"""Selection and ordering: which interceptors run, on which side, in what order."""

from __future__ import annotations

from typing import Any

import pytest

from policy_engine.chain import ChainEntry, InterceptorChain, side_for
from policy_engine.wire import ChainExecutionParams, InterceptorOverrides, Phase, Side

from .providers import Journal, ScriptedProvider, allow, append, entries, mutator, validator


def params(
    phase: Phase = "request", event: str = "tools/call", **extra: Any
) -> ChainExecutionParams:
    return ChainExecutionParams.model_validate(
        {"event": event, "phase": phase, "payload": {"name": "echo", "trail": []}, **extra}
    )


def trail_validator(name: str = "check") -> Any:
    """A validator that passes and reports, in ``info``, the trail it was shown."""

    async def handle(p: Any) -> dict[str, Any]:
        return {"valid": True, "info": {"trail": p.payload["trail"]}}

    return validator(name, handle)


@pytest.mark.parametrize(
    ("side", "first", "validator_saw"),
    [("sending", "mut@a", ["m"]), ("receiving", "check@a", [])],
)
async def test_side_orders_the_stages(side: Side, first: str, validator_saw: list[str]) -> None:
    provider = ScriptedProvider("a", mutator("mut", append("m")), trail_validator())
    result = await InterceptorChain(entries(provider)).execute(params(), side=side)

    assert result.status == "success"
    assert provider.journal.started[0] == first
    assert len(provider.journal.started) == 2
    check = next(r for r in result.results if r.interceptor == "check")
    assert check.info == {"trail": validator_saw}
    assert result.final_payload == {"name": "echo", "trail": ["m"]}


async def test_one_global_priority_order_across_hosts_feeds_each_output_forward() -> None:
    journal = Journal()
    host_a = ScriptedProvider(
        "a",
        mutator("a-late", append("a-late"), priorityHint=5),
        mutator("a-early", append("a-early"), priorityHint=-10),
        journal=journal,
    )
    host_b = ScriptedProvider(
        "b",
        mutator("b-first", append("b-first"), priorityHint=-20),
        mutator("b-mid", append("b-mid")),
        journal=journal,
    )
    result = await InterceptorChain(entries(host_a, host_b)).execute(params(), side="sending")

    order = ["b-first", "a-early", "b-mid", "a-late"]
    assert result.final_payload["trail"] == order
    assert [r.interceptor for r in result.results] == order
    # each mutator was handed the previous one's output, not the original
    seen = [journal.params[f"{n}@{n[0]}"][0].payload["trail"] for n in order]
    assert seen == [order[:i] for i in range(4)]


async def test_ties_break_by_name_then_keep_host_order_and_duplicates_stay_apart() -> None:
    host_a = ScriptedProvider(
        "a", mutator("zeta", append("zeta@a")), mutator("alpha", append("alpha@a"))
    )
    host_b = ScriptedProvider("b", mutator("alpha", append("alpha@b")))
    for hosts, expected in [
        ((host_a, host_b), ["alpha@a", "alpha@b", "zeta@a"]),
        ((host_b, host_a), ["alpha@b", "alpha@a", "zeta@a"]),
    ]:
        result = await InterceptorChain(entries(*hosts)).execute(params(), side="sending")
        assert result.final_payload["trail"] == expected
        assert [r.interceptor for r in result.results] == ["alpha", "alpha", "zeta"]


@pytest.mark.parametrize(
    ("phase", "expected"),
    [
        ("request", ["phased", "plain", "overridden"]),
        ("response", ["plain", "phased", "overridden"]),
    ],
)
async def test_priority_is_resolved_per_phase_and_overrides_beat_declarations(
    phase: Phase, expected: list[str]
) -> None:
    provider = ScriptedProvider(
        "a",
        mutator("phased", append("phased"), priorityHint={"request": -5, "response": 7}),
        mutator("plain", append("plain")),
        mutator("overridden", append("overridden"), priorityHint=-100),
    )
    built = entries(provider)
    built[2] = ChainEntry(
        interceptor=built[2].interceptor,
        host=built[2].host,
        overrides=InterceptorOverrides(priority_hint=100),
    )
    result = await InterceptorChain(built).execute(params(phase), side="sending")
    assert result.final_payload["trail"] == expected


async def test_priority_hint_does_not_order_validators() -> None:
    provider = ScriptedProvider(
        "a",
        validator("zz", priorityHint=-1000),
        validator("aa", priorityHint=1000),
        validator("mm"),
    )
    result = await InterceptorChain(entries(provider)).execute(params(), side="sending")
    assert [r.interceptor for r in result.results] == ["aa", "mm", "zz"]


async def test_selection_by_event_phase_and_names() -> None:
    provider = ScriptedProvider(
        "a",
        validator("exact", events=["tools/call"]),
        validator("star", events=["*"]),
        validator("namespace", events=["tools/*"]),
        validator("other-namespace", events=["resources/*"]),
        validator("other-event", events=["tools/list"]),
        validator("response-only", events=["tools/call"], phases=["response"]),
    )
    chain = InterceptorChain(entries(provider))

    def ran(result: Any) -> set[str]:
        return {r.interceptor for r in result.results}

    result = await chain.execute(params("request"), side="sending")
    assert ran(result) == {"exact", "star", "namespace"}
    result = await chain.execute(params("response"), side="receiving")
    assert ran(result) == {"exact", "star", "namespace", "response-only"}
    result = await chain.execute(params(event="prompts/get"), side="sending")
    assert ran(result) == {"star"}
    result = await chain.execute(params(interceptors=["star", "exact"]), side="sending")
    assert ran(result) == {"star", "exact"}
    result = await chain.execute(params(interceptors=[]), side="sending")
    assert result.results == [] and result.status == "success"


async def test_context_config_and_timeout_reach_every_invoke() -> None:
    provider = ScriptedProvider("a", mutator("mut", append("m")), validator("check", allow()))
    mut_entry, check_entry = entries(provider)
    static = {"level": "low", "keep": True}
    built = [
        ChainEntry(
            mut_entry.interceptor, mut_entry.host, InterceptorOverrides(timeout_ms=1234), static
        ),
        ChainEntry(check_entry.interceptor, check_entry.host, config=static),
    ]
    chain = InterceptorChain(built, default_timeout_ms=999)
    context = {"sessionId": "s-1", "traceId": "t-1", "timestamp": "2025-01-01T00:00:00Z"}
    await chain.execute(params(context=context, config={"mut": {"level": "high"}}), side="sending")

    mut, check = provider.journal.seen("mut@a"), provider.journal.seen("check@a")
    assert mut.config == {"level": "high", "keep": True}
    assert check.config == {"level": "low", "keep": True}
    assert mut.timeout_ms == 1234 and check.timeout_ms == 999
    for seen in (mut, check):
        assert seen.context is not None
        assert seen.context.to_wire() == context
        assert (seen.event, seen.phase) == ("tools/call", "request")


async def test_no_config_means_none_is_sent() -> None:
    provider = ScriptedProvider("a", validator("check"))
    await InterceptorChain(entries(provider)).execute(params(), side="sending")
    seen = provider.journal.seen("check@a")
    assert seen.config is None and seen.timeout_ms is None and seen.context is None


@pytest.mark.parametrize(
    ("role", "phase", "side"),
    [
        ("client", "request", "sending"),
        ("client", "response", "receiving"),
        ("server", "request", "receiving"),
        ("server", "response", "sending"),
    ],
)
def test_side_for_roles(role: str, phase: Phase, side: Side) -> None:
    assert side_for(role, phase) == side


async def test_unknown_side_is_refused() -> None:
    chain = InterceptorChain([])
    with pytest.raises(ValueError, match="side must be"):
        await chain.execute(params(), side="inbound")  # type: ignore[arg-type]

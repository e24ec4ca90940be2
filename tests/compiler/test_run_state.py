"""A caller that changes a payload (or a context) in place between two calls is judged
on what it holds now.

A policy set used to remember the last payload it measured by object
identity (its size, its `size($)` figures, its probe of which regexes occur)
and the last context's wire form, on the shared `PolicySet`: a library
caller reusing one dict, changed in place, got the first call's decision
back. A `deny if ... matches /secret/` rule let "my secret" through and a
10 KB payload passed a 200-byte limit, through `invoke_sync`, `invoke` and
`InterceptorChain.execute` alike. What one invoke measures now lives in the
chain run's `RunState` (`wire/run.py`) and nowhere else.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest

from policy_engine.chain import InterceptorChain
from policy_engine.compiler import Limits, PolicySet, compile_sources
from policy_engine.wire import (
    ChainExecutionParams,
    InvocationContext,
    InvokeParams,
    MutationResult,
    Principal,
    RunState,
    ValidationResult,
)
from policy_engine.wire.errors import INVALID_PARAMS, InterceptorError

SOURCE = """
validator secrets "No secrets" {
  on tools/call request
  deny if $.arguments.note matches /secret/ "mentions a secret" code secret
}
validator sizes "Size caps" {
  on tools/call request
  deny if size($) > 300 "message too big" code whole
  deny if size($.arguments) > 200 "arguments too big" code args
}
validator levels "Clearance" {
  on tools/call request
  deny if context.principal.claims.level > 3 "clearance too high" code level
}
mutator scrub "Scrubs" {
  on tools/call request
  redact $.arguments.email with "[EMAIL]"
}
"""


def policy(max_bytes: int | None = None) -> PolicySet:
    limits = Limits(max_bytes=max_bytes) if max_bytes is not None else None
    return compile_sources({"p.policy": SOURCE}, limits)


def request(note: str = "hello") -> dict[str, Any]:
    return {"name": "send", "arguments": {"note": note, "email": "bob@example.com"}}


# -- three ways a library caller invokes one interceptor ------------------------

Invoke = Callable[[PolicySet, str, dict[str, Any], InvocationContext | None], Any]


def by_invoke_sync(
    policies: PolicySet, name: str, payload: dict[str, Any], context: InvocationContext | None
) -> ValidationResult | MutationResult:
    return policies.invoke_sync(name, "tools/call", "request", payload, context=context)


def by_invoke(
    policies: PolicySet, name: str, payload: dict[str, Any], context: InvocationContext | None
) -> ValidationResult | MutationResult:
    params = InvokeParams(
        name=name, event="tools/call", phase="request", payload=payload, context=context
    )
    assert params.payload is payload  # the same object reaches the set: the case at stake
    return anyio.run(policies.invoke, params)


def by_chain(
    policies: PolicySet, name: str, payload: dict[str, Any], context: InvocationContext | None
) -> ValidationResult | MutationResult:
    """One `InterceptorChain.execute` selecting ``name``, its outcome as a verdict."""

    async def run() -> Any:
        async with InterceptorChain.connect(local={"p": policies}) as chain:
            params = ChainExecutionParams(
                event="tools/call",
                phase="request",
                payload=payload,
                context=context,
                interceptors=[name],
            )
            assert params.payload is payload
            return await chain.execute(params, side="sending")

    result = anyio.run(run)
    entry = result.results[0]
    if entry.error is not None:
        raise InterceptorError(INVALID_PARAMS, entry.error)
    return ValidationResult(
        interceptor=name, phase="request", valid=result.status == "success", messages=None
    )


WAYS = [by_invoke_sync, by_invoke, by_chain]
IDS = ["invoke_sync", "invoke", "chain"]


def said(err: InterceptorError) -> str:
    """An error's message and data (the chain folds the data's reason into its message)."""
    return f"{err.message} {err.data}"


def valid(outcome: Awaitable[Any] | Any) -> bool:
    assert isinstance(outcome, ValidationResult)
    return outcome.valid


@pytest.mark.parametrize("way", WAYS, ids=IDS)
def test_a_secret_written_in_place_is_denied(way: Invoke) -> None:
    """The probe said no string holds `secret`; it must not say so of the changed dict."""
    policies = policy()
    payload = request("all clear")
    assert valid(way(policies, "secrets", payload, None))
    payload["arguments"]["note"] = "my secret"
    assert not valid(way(policies, "secrets", payload, None))


@pytest.mark.parametrize("way", WAYS, ids=IDS)
def test_a_payload_grown_in_place_past_the_size_limit_is_refused(way: Invoke) -> None:
    policies = policy(max_bytes=200)
    payload = request()
    assert valid(way(policies, "secrets", payload, None))
    payload["arguments"]["note"] = "x" * 10_000
    with pytest.raises(InterceptorError) as raised:
        way(policies, "secrets", payload, None)
    assert "larger than the limit of 200 bytes" in said(raised.value)


@pytest.mark.parametrize("way", WAYS, ids=IDS)
def test_size_of_the_message_follows_an_in_place_change(way: Invoke) -> None:
    policies = policy()
    payload = request()
    assert valid(way(policies, "sizes", payload, None))
    payload["padding"] = "y" * 400  # the arguments stay small: only `size($)` sees it
    assert not valid(way(policies, "sizes", payload, None))


@pytest.mark.parametrize("way", WAYS, ids=IDS)
def test_size_of_a_member_follows_an_in_place_change(way: Invoke) -> None:
    """`size($.arguments)` is memoised per container; the container changed since."""
    policies = policy(max_bytes=10_000)
    payload = request()
    arguments = payload["arguments"]
    assert valid(way(policies, "sizes", payload, None))
    payload.clear()  # `size($)` shrinks below its cap while the arguments grow past theirs
    payload["arguments"] = arguments
    arguments["note"] = "z" * 250
    assert not valid(way(policies, "sizes", payload, None))


@pytest.mark.parametrize("way", WAYS[1:], ids=IDS[1:])
def test_a_context_changed_in_place_is_read_as_it_is_now(way: Invoke) -> None:
    """A context model is frozen, but its claims are a dict the caller can change."""
    policies = policy()
    context = InvocationContext(principal=Principal(type="user", id="u", claims={"level": 1}))
    assert context.principal is not None and context.principal.claims is not None
    claims = context.principal.claims
    payload = request()
    assert valid(way(policies, "levels", payload, context))
    claims["level"] = 9
    assert not valid(way(policies, "levels", payload, context))
    claims["level"] = 2
    assert valid(way(policies, "levels", payload, context))


def test_a_mutators_output_changed_in_place_is_measured_again() -> None:
    """The set used to remember a mutator's output as bounded for the next invoke."""
    policies = policy(max_bytes=200)
    scrubbed = policies.invoke_sync("scrub", "tools/call", "request", request())
    assert isinstance(scrubbed, MutationResult) and scrubbed.modified
    output = scrubbed.payload
    output["arguments"]["note"] = "my secret " + "x" * 10_000
    with pytest.raises(InterceptorError):
        policies.invoke_sync("secrets", "tools/call", "request", output)


def test_a_non_matching_payload_probed_without_the_fast_path_is_read_fresh() -> None:
    """A payload whose JSON text holds a backslash is never probed: its `matches`
    scans are per invoke (`EvalContext.memo`), which an in-place change cannot reach."""
    policies = policy()
    payload = request('quote \\" here')
    assert valid(by_invoke_sync(policies, "secrets", payload, None))
    payload["arguments"]["note"] = 'quote \\" secret'
    assert not valid(by_invoke_sync(policies, "secrets", payload, None))


def test_the_invokes_of_one_run_share_what_they_measured() -> None:
    """Within a run the payload is measured once (the chain's hot path keeps its
    saving); a new run, or no run, measures again."""
    policies = policy()
    payload = request()
    run = RunState()
    first = policies.invoke_sync("secrets", "tools/call", "request", payload, run=run)
    remembered = policies._memo(run).bounded
    assert first.valid and remembered is not None and remembered.payload is payload
    policies.invoke_sync("sizes", "tools/call", "request", payload, run=run)
    assert policies._memo(run).bounded is remembered
    assert policies._memo(RunState()).bounded is None
    assert policies._memo(None).bounded is None


def test_one_run_state_keeps_each_policy_set_apart() -> None:
    """Two sets in one chain run (two hosts) each keep their own memo."""
    run = RunState()
    small, large = policy(max_bytes=200), policy()
    payload = copy.deepcopy(request("n" * 300))
    assert large.invoke_sync("secrets", "tools/call", "request", payload, run=run).valid
    with pytest.raises(InterceptorError):
        small.invoke_sync("secrets", "tools/call", "request", payload, run=run)


def test_a_chain_run_measures_its_payload_once_and_the_next_run_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The chain hands every invoke of a run its `RunState`: three validators of one
    set walk the payload once, and each run walks it afresh."""
    from policy_engine.compiler import policy_set as module

    walks: list[object] = []
    original = module.measure_bounds

    def counting(payload: Any, *args: Any) -> Any:
        walks.append(payload)
        return original(payload, *args)

    monkeypatch.setattr(module, "measure_bounds", counting)
    policies = policy()
    payload = request()

    async def twice() -> None:
        async with InterceptorChain.connect(local={"p": policies}) as chain:
            params = ChainExecutionParams(
                event="tools/call",
                phase="request",
                payload=payload,
                interceptors=["secrets", "sizes", "levels"],
            )
            for _ in range(2):
                assert (await chain.execute(params, side="sending")).status == "success"

    anyio.run(twice)
    assert walks == [payload, payload]

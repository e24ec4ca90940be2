"""SEP-2624 chain requirements not covered elsewhere: audit-mode timeouts, immutable
order, validators that cannot change the message.

"Interceptors in audit mode that timeout MUST be logged but MUST NOT block
the main flow", and "Interceptor chain order must be explicitly configured
and immutable" (Threat Model, Interceptor Bypass): nothing a caller passes at
run time, and nothing done to the list the chain was built from, reorders it.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from policy_engine.chain import ChainEntry, InterceptorChain
from policy_engine.wire import ChainExecutionParams, InterceptorOverrides, InvokeParams

from .providers import ScriptedProvider, append, entries, hang, mutator, validator

ORIGINAL = {"name": "echo", "trail": []}


def _params(**extra: Any) -> ChainExecutionParams:
    return ChainExecutionParams.model_validate(
        {"event": "tools/call", "phase": "request", "payload": ORIGINAL, **extra}
    )


def _audited(built: list[ChainEntry], name: str) -> list[ChainEntry]:
    return [
        ChainEntry(e.interceptor, e.host, InterceptorOverrides(timeoutMs=20), e.config)
        if e.name == name
        else e
        for e in built
    ]


@pytest.mark.parametrize("kind", ["validation", "mutation"])
@pytest.mark.parametrize("fail_open", [False, True])
async def test_an_audit_interceptor_that_times_out_is_recorded_and_never_blocks(
    kind: str, fail_open: bool
) -> None:
    cancelled = anyio.Event()
    make = validator if kind == "validation" else mutator
    stuck = make("stuck", hang(cancelled), mode="audit", failOpen=fail_open)
    provider = ScriptedProvider("a", stuck, mutator("m", append("m")))
    chain = InterceptorChain(_audited(entries(provider), "stuck"))
    with anyio.fail_after(5):
        result = await chain.execute(_params(), side="sending")
    assert cancelled.is_set()
    assert result.status == "success"
    assert result.final_payload["trail"] == ["m"]
    recorded = {r.interceptor: r for r in result.results}["stuck"]
    assert (recorded.mode, recorded.error) == ("audit", "timed out after 20 ms")
    # A validator's timeout also counts in the validation summary, by its failOpen.
    summary = result.validation_summary
    counted = ((1, 0) if fail_open else (0, 1)) if kind == "validation" else (0, 0)
    assert (summary.warnings, summary.errors) == counted


async def test_the_configured_order_cannot_be_changed_at_run_time() -> None:
    provider = ScriptedProvider(
        "a",
        mutator("b-late", append("late"), priorityHint=10),
        mutator("a-early", append("early"), priorityHint=-10),
        mutator("c-mid", append("mid")),
    )
    built = entries(provider)
    chain = InterceptorChain(built)
    expected = ["early", "mid", "late"]
    # Naming the interceptors in another order selects them; it does not order them.
    reordered = await chain.execute(
        _params(interceptors=["b-late", "c-mid", "a-early"]), side="sending"
    )
    assert reordered.final_payload["trail"] == expected
    # The list the chain was built from is the caller's; changing it changes nothing.
    built.reverse()
    built.pop()
    assert (await chain.execute(_params(), side="sending")).final_payload["trail"] == expected
    assert isinstance(chain.entries, tuple) and len(chain.entries) == 3


@pytest.mark.parametrize("side", ["sending", "receiving"])
async def test_nothing_a_validator_does_to_the_payload_reaches_the_message(side: str) -> None:
    """Validators MUST NOT modify the payload: one that writes to the payload it was
    given, and answers with a payload of its own, changes neither the final
    payload nor what the mutator sees."""

    async def tamper(params: InvokeParams) -> dict[str, Any]:
        params.payload["name"] = "shell_exec"
        params.payload["trail"].append("tampered")
        return {"valid": True, "payload": {"name": "rm"}}

    provider = ScriptedProvider("a", validator("sly", tamper), mutator("m", append("m")))
    result = await InterceptorChain(entries(provider)).execute(_params(), side=side)
    assert result.status == "success"
    assert result.final_payload == {"name": "echo", "trail": ["m"]}
    assert provider.journal.seen("m@a").payload["name"] == "echo"
    assert ORIGINAL == {"name": "echo", "trail": []}

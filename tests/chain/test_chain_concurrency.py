"""Validators run concurrently: the chain waits for the slowest, not for the sum.

Shown without measuring time: each of three validators waits until the other
two have started. Run one after another, the first would wait forever (the
``fail_after`` bound turns that deadlock into a failure); run concurrently,
all three are released.
"""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel

from policy_engine.chain import InterceptorChain
from policy_engine.wire import ChainExecutionParams, InvokeParams

from .providers import Handler, ScriptedProvider, append, entries, mutator, validator

NAMES = ("v1", "v2", "v3")


def rendezvous(name: str, started: dict[str, anyio.Event]) -> Handler:
    async def handle(params: InvokeParams) -> dict[str, Any]:
        started[name].set()
        for other, event in started.items():
            if other != name:
                await event.wait()
        return {"valid": True}

    return handle


async def test_validators_overlap_in_time() -> None:
    started = {name: anyio.Event() for name in NAMES}
    provider = ScriptedProvider("a", *(validator(n, rendezvous(n, started)) for n in NAMES))
    chain = InterceptorChain(entries(provider))
    params = ChainExecutionParams(event="tools/call", phase="request", payload={})

    with anyio.fail_after(5):
        result = await chain.execute(params, side="sending")

    assert result.status == "success"
    assert [r.valid for r in result.results] == [True, True, True]


async def test_mutators_never_overlap() -> None:
    running: list[str] = []
    overlaps: list[tuple[str, str]] = []

    def exclusive(name: str) -> Handler:
        inner = append(name)

        async def handle(params: InvokeParams) -> dict[str, Any]:
            overlaps.extend((other, name) for other in running)
            running.append(name)
            await anyio.lowlevel.checkpoint()
            running.remove(name)
            return await inner(params)

        return handle

    provider = ScriptedProvider("a", *(mutator(n, exclusive(n)) for n in NAMES))
    params = ChainExecutionParams(event="tools/call", phase="request", payload={})
    result = await InterceptorChain(entries(provider)).execute(params, side="sending")
    assert overlaps == []
    assert result.final_payload == {"trail": list(NAMES)}

"""The SEP chain over a compiled policy set in this process, with rule traces.

`policyc eval` and `policyc test` use this: the same ordering and failure
rules as a chain over remote servers, with no JSON-RPC round trip, and a
trace of which rules ran so results can be explained and covered.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ..chain import InterceptorChain
from ..compiler import PolicySet, Trace
from ..wire import (
    ChainExecutionParams,
    ChainExecutionResult,
    InterceptorDescriptor,
    InvocationContext,
    InvokeParams,
    MutationResult,
    Phase,
    Side,
    ValidationResult,
)
from ..wire.provider import ProviderTraits
from ..wire.run import RunState


@dataclass
class TracingProvider:
    """A PolicySet seen as a provider that remembers the trace of every invoke."""

    policy_set: PolicySet
    traces: list[tuple[str, Trace]] = field(default_factory=list)

    @property
    def traits(self) -> ProviderTraits:
        """The set's own promises, with `invoke_fields` traced: the chain routes every
        invoke exactly as it routes the set's in `serve` and the gateway."""
        return replace(self.policy_set.traits, invoke_fields=self.invoke_fields)

    def descriptors(self) -> list[InterceptorDescriptor]:
        return self.policy_set.descriptors()

    async def invoke(self, params: InvokeParams) -> ValidationResult | MutationResult:
        return await self.invoke_fields(
            params.name,
            params.event,
            params.phase,
            params.payload,
            params.config,
            params.timeout_ms,
            params.context,
        )

    async def invoke_fields(
        self,
        name: str,
        event: str,
        phase: Phase,
        payload: Any,
        config: dict[str, Any] | None,
        timeout_ms: int | None,
        context: InvocationContext | None,
        run: RunState | None = None,
    ) -> ValidationResult | MutationResult:
        trace = Trace()
        self.traces.append((name, trace))
        return await self.policy_set.invoke_fields(
            name, event, phase, payload, config, timeout_ms, context, run, trace=trace
        )


async def run_local_chain(
    provider: TracingProvider,
    params: ChainExecutionParams,
    side: Side,
    extra_servers: list[str] | None = None,
    chain_config: Any = None,
) -> ChainExecutionResult:
    """One chain execution over the policy set (and any remote servers given)."""
    provider.traces.clear()
    async with InterceptorChain.connect(
        local={"policies": provider}, servers=extra_servers or [], config=chain_config
    ) as chain:
        chain.check_selection(params.interceptors)
        return await chain.execute(params, side=side)

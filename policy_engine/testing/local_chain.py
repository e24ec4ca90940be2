"""The SEP chain over a compiled policy set in this process, with rule traces.

`policyc eval` and `policyc test` use this: the same ordering and failure
rules as a chain over remote servers, with no JSON-RPC round trip, and a
trace of which rules ran so results can be explained and covered.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..chain import InterceptorChain
from ..compiler import PolicySet, Trace
from ..wire import (
    ChainExecutionParams,
    ChainExecutionResult,
    InterceptorDescriptor,
    InvokeParams,
    MutationResult,
    Side,
    ValidationResult,
)
from ..wire.provider import ProviderTraits


@dataclass
class TracingProvider:
    """A PolicySet seen as a provider that remembers the trace of every invoke."""

    policy_set: PolicySet
    traces: list[tuple[str, Trace]] = field(default_factory=list)

    @property
    def traits(self) -> ProviderTraits:
        """The set's, except that every invoke goes through `invoke` (to be traced)."""
        inner = self.policy_set.traits
        return ProviderTraits(
            never_modifies_payload=True, evaluates_in_process=inner.evaluates_in_process
        )

    def descriptors(self) -> list[InterceptorDescriptor]:
        return self.policy_set.descriptors()

    async def invoke(self, params: InvokeParams) -> ValidationResult | MutationResult:
        trace = Trace()
        self.traces.append((params.name, trace))
        context = params.context.to_wire() if params.context is not None else None
        return self.policy_set.invoke_sync(
            params.name, params.event, params.phase, params.payload, params.config, context, trace
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

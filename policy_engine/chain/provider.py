"""A whole chain seen as one provider, so an interceptor server can expose what it runs.

The gateway's ``--expose-interceptors`` and an in-process server's
``expose_interceptors=True`` both serve a chain's entries (local policies and
remote servers' interceptors) through the interceptor server's own service.
"""

from __future__ import annotations

from policy_engine.wire import InterceptorDescriptor, InvokeParams, MutationResult, ValidationResult
from policy_engine.wire.errors import unknown_interceptor
from policy_engine.wire.provider import ProviderTraits

from .entry import ChainEntry
from .interceptor_chain import InterceptorChain


class ChainProvider:
    """Every entry of a chain as one provider (the first entry of a name wins)."""

    # Each entry's host gets the payload as the chain would hand it on.
    traits = ProviderTraits(never_modifies_payload=True)

    def __init__(self, chain: InterceptorChain) -> None:
        self._entries: dict[str, ChainEntry] = {}
        for entry in chain.entries:
            self._entries.setdefault(entry.name, entry)

    def descriptors(self) -> list[InterceptorDescriptor]:
        return [entry.interceptor for entry in self._entries.values()]

    async def invoke(self, params: InvokeParams) -> ValidationResult | MutationResult:
        entry = self._entries.get(params.name)
        if entry is None:
            raise unknown_interceptor(params.name, list(self._entries))
        return await entry.host.provider.invoke(params)

"""``--expose-interceptors``: the gateway's own chain, discoverable with the SEP's methods.

The chain's entries (local policies and remote servers' interceptors) are
seen as one provider, and the interceptor server's own service answers
``interceptors/list`` and ``interceptor/invoke`` from it, with the same codes
and error data as ``policyc serve``. Without the flag those methods are the
backend's, forwarded like any other.
"""

from __future__ import annotations

from typing import Any

from policy_engine.chain import ChainEntry, InterceptorChain
from policy_engine.server import InterceptorService, static_source
from policy_engine.wire import InterceptorDescriptor, InvokeParams, MutationResult, ValidationResult
from policy_engine.wire.errors import unknown_interceptor


class ChainProvider:
    """Every entry of a chain as one provider (the first entry of a name wins)."""

    never_modifies_payload = True

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


def exposed_service(chain: InterceptorChain) -> InterceptorService:
    return InterceptorService(static_source(ChainProvider(chain)))


def capability(service: InterceptorService) -> dict[str, Any]:
    return dict(service.catalog().capability())

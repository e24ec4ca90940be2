"""A chain over in-process policy sets, built without an event loop."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from policy_engine.chain import Host, InterceptorChain, Selector, build_entries
from policy_engine.wire import InterceptorOverrides, InterceptorProvider

Providers = InterceptorProvider | Sequence[InterceptorProvider]


def providers_of(policies: Providers) -> list[InterceptorProvider]:
    """One provider or several, as a list (a PolicySet is one provider)."""
    if isinstance(policies, Sequence):
        return list(policies)
    return [policies]


def local_chain(
    policies: Providers,
    *,
    overrides: Mapping[Selector, InterceptorOverrides] | None = None,
    default_timeout_ms: int | None = None,
) -> InterceptorChain:
    """The chain of local providers only: their descriptors are known, nothing to discover."""
    hosts = [Host(f"local-{i}", p) for i, p in enumerate(providers_of(policies), start=1)]
    entries = build_entries([(host, host.provider.descriptors()) for host in hosts], overrides)
    return InterceptorChain(entries, default_timeout_ms=default_timeout_ms)

"""An indexed view of one provider's descriptors.

Descriptors are asked for once per provider, not once per request: a
compiled policy set is immutable, and a reload brings a new provider object,
which invalidates the cache by identity.
"""

from __future__ import annotations

from dataclasses import dataclass

from policy_engine.wire import InterceptorDescriptor, InterceptorProvider

EXTENSION_ID = "io.modelcontextprotocol/interceptors"


@dataclass(frozen=True)
class Catalog:
    provider: InterceptorProvider
    descriptors: tuple[InterceptorDescriptor, ...]
    by_name: dict[str, InterceptorDescriptor]

    @classmethod
    def of(cls, provider: InterceptorProvider) -> Catalog:
        descriptors = tuple(provider.descriptors())
        by_name: dict[str, InterceptorDescriptor] = {}
        for descriptor in descriptors:
            by_name.setdefault(descriptor.name, descriptor)
        return cls(provider, descriptors, by_name)

    def supported_events(self) -> list[str]:
        """The union of hooked events, in first-declared order so it is stable."""
        seen: dict[str, None] = {}
        for descriptor in self.descriptors:
            for event in descriptor.hooked_events():
                seen.setdefault(event, None)
        return list(seen)

    def capability(self) -> dict[str, list[str]]:
        """The settings advertised for ``io.modelcontextprotocol/interceptors``."""
        return {"supportedEvents": self.supported_events()}


class CatalogCache:
    """Remembers the catalog of the provider the source returned last."""

    def __init__(self) -> None:
        self._current: Catalog | None = None

    def get(self, provider: InterceptorProvider) -> Catalog:
        current = self._current
        if current is None or current.provider is not provider:
            current = Catalog.of(provider)
            self._current = current
        return current

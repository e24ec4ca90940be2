"""Where the server gets its interceptors from, one call per request.

The server never holds a provider: it asks a zero-argument *source* each time.
A hot reload then only has to replace what the source returns, and every
request sees either the whole old set or the whole new one, never a mix.
"""

from __future__ import annotations

from collections.abc import Callable

from policy_engine.wire import InterceptorProvider

ProviderSource = Callable[[], InterceptorProvider]


class ProviderCell:
    """A source whose provider can be replaced while requests are in flight.

    Reading and swapping are single attribute operations on one event loop, so
    a swap is atomic for every reader without a lock.
    """

    def __init__(self, provider: InterceptorProvider) -> None:
        self._provider = provider

    def __call__(self) -> InterceptorProvider:
        return self._provider

    def swap(self, provider: InterceptorProvider) -> None:
        self._provider = provider


def static_source(provider: InterceptorProvider) -> ProviderSource:
    """A source that always serves the same provider (no reload)."""
    return ProviderCell(provider)

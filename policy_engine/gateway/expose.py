"""``--expose-interceptors``: the gateway's own chain, discoverable with the SEP's methods.

The chain's entries are seen as one provider (``ChainProvider``), and the
interceptor server's own service answers ``interceptors/list`` and
``interceptor/invoke`` from it, with the same codes and error data as
``policyc serve``. Without the flag those methods are the backend's,
forwarded like any other.
"""

from __future__ import annotations

from typing import Any

from policy_engine.chain import ChainProvider, InterceptorChain
from policy_engine.server import InterceptorService, static_source


def exposed_service(chain: InterceptorChain) -> InterceptorService:
    return InterceptorService(static_source(ChainProvider(chain)))


def capability(service: InterceptorService) -> dict[str, Any]:
    return dict(service.catalog().capability())

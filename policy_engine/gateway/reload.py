"""The gateway's operator signals and hot reload, with `policyc serve`'s rules.

``SIGHUP`` (what logrotate sends) used to kill the gateway. Now it reopens
the decision log and the traffic record, and reloads the policy files;
``--watch`` also reloads them when they change. A reload is `serve`'s
:class:`~policy_engine.server.reload.Reloader`: a set that fails to compile,
is empty, or would drop interceptors (unless ``--allow-shrink``) is refused
and the last good set keeps serving. An accepted set becomes a new chain
around the same remote interceptor servers, swapped in whole: a chain run
sees the old set or the new one, never a mix.
"""

from __future__ import annotations

import logging
import signal
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio

from policy_engine.chain import (
    ChainConfigError,
    Host,
    InterceptorChain,
    Selector,
    build_entries,
)
from policy_engine.interception import Interception
from policy_engine.server.reload import Loader, Reloader, ReloadEvent
from policy_engine.wire import InterceptorOverrides, InterceptorProvider

logger = logging.getLogger("policyc.gateway")

LOCAL_HOST = "local-1"
"""The id of the gateway's own policy set in the chain (the first local provider)."""


class GatewayReload:
    """Owns the policy set's cell and rebuilds the chain when the set changes."""

    def __init__(
        self,
        paths: Sequence[Path],
        load: Loader,
        *,
        watch: bool,
        allow_shrink: bool,
        initial: InterceptorProvider | None = None,
    ) -> None:
        # ``initial``: the set already compiled (and checked) at start-up, served as it is.
        self.reloader = Reloader(
            paths, load, allow_shrink=allow_shrink, on_reload=self._swap, initial=initial
        )
        self.watch = watch
        self._interception: Interception | None = None
        self._overrides: dict[Selector, InterceptorOverrides] = {}
        self._configs: dict[Selector, dict[str, Any]] = {}
        self._served: InterceptorProvider = self.reloader.cell()

    def provider(self) -> InterceptorProvider:
        return self.reloader.cell()

    def attach(
        self,
        interception: Interception,
        overrides: dict[Selector, InterceptorOverrides],
        configs: dict[Selector, dict[str, Any]],
    ) -> None:
        """The chain to rebuild, and the settings it was built with."""
        self._interception = interception
        self._overrides = overrides
        self._configs = configs

    async def run(self, reopen: Callable[[], None]) -> None:
        """Serve SIGHUP (reopen logs, reload) and, with ``--watch``, file changes."""
        async with anyio.create_task_group() as tg:
            if self.watch:
                tg.start_soon(self.reloader.run)
            with anyio.open_signal_receiver(signal.SIGHUP) as signals:
                async for _ in signals:
                    logger.info("SIGHUP: reopening logs and reloading policies")
                    reopen()
                    await self.reloader.reload_now()

    def _swap(self, event: ReloadEvent) -> None:
        if not event.ok or self._interception is None:
            return
        provider = self.reloader.cell()
        old = self._interception.chain
        try:
            chain = rebuilt(old, provider, self._overrides, self._configs)
        except ChainConfigError as err:
            logger.error("reload refused; still serving the last good policy set: %s", err)
            self.reloader.cell.swap(self._served)
            return
        self._interception.chain = chain
        self._served = provider


def rebuilt(
    chain: InterceptorChain,
    provider: InterceptorProvider,
    overrides: dict[Selector, InterceptorOverrides],
    configs: dict[Selector, dict[str, Any]],
) -> InterceptorChain:
    """``chain`` with its local policy set replaced by ``provider``'s; remote hosts kept."""
    remote: dict[str, tuple[Host, list[Any]]] = {}
    for entry in chain.entries:
        if entry.host.id != LOCAL_HOST:
            remote.setdefault(entry.host.id, (entry.host, []))[1].append(entry.interceptor)
    discovered = [(Host(LOCAL_HOST, provider), list(provider.descriptors())), *remote.values()]
    entries = build_entries(discovered, overrides=overrides, configs=configs)
    return InterceptorChain(entries, default_timeout_ms=chain.default_timeout_ms)

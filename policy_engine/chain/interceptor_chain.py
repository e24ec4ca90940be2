"""The SEP's InterceptorChain: entries from any number of hosts, executed as one.

:meth:`InterceptorChain.connect` is the usual way in: it opens the remote
servers, discovers every host in parallel, applies the invoker's settings and
yields a chain whose sessions stay open (and are reused) until the ``async
with`` block ends.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, TextIO, TypeVar

import anyio

from policy_engine.wire import (
    ChainExecutionParams,
    ChainExecutionResult,
    InterceptorOverrides,
    InterceptorProvider,
    Phase,
    Side,
)

from ..wire.constants import INT32_MAX
from .config import ChainConfig
from .discovery import discover_hosts
from .entry import ChainEntry, Host
from .errors import ChainConfigError
from .execution import Selection, execute_chain, select_entries, select_hooked
from .remote import RemoteProvider
from .servers import ServerSpec
from .settings import Selector, build_entries, merge_overrides, name_hint
from .tracing import TraceSpan

DEFAULT_DISCOVERY_TIMEOUT_MS = 30_000

_T = TypeVar("_T")


def side_for(role: str, phase: Phase) -> Side:
    """The side an invoker is on: a client sends requests, a server receives them.

    A gateway or server (``role="server"``) receives requests and sends
    responses; a client (``role="client"``) does the opposite.
    """
    if role not in ("client", "server"):
        raise ValueError(f"role must be `client` or `server`, not `{role}`")
    sends_requests = role == "client"
    return "sending" if (phase == "request") == sends_requests else "receiving"


def _checked_timeout(value: int | None) -> int | None:
    """The default timeout as every invoke will carry it, refused here if it could not be."""
    if value is None:
        return None
    if type(value) is not int or not 0 < value <= INT32_MAX:
        raise ChainConfigError(
            "default_timeout_ms must be a whole number of milliseconds",
            help=f"give an int from 1 to {INT32_MAX}, or None for no default",
        )
    return value


# How many (event, phase) selections a chain keeps, and the longest event name
# it keeps one for: the event is the method a peer sent, so both are bounded.
MAX_KEPT_SELECTIONS = 256
MAX_KEPT_EVENT_LENGTH = 128


class InterceptorChain:
    """Ordered, trust-boundary-aware execution over a fixed list of entries."""

    def __init__(self, entries: Sequence[ChainEntry], *, default_timeout_ms: int | None = None):
        self._entries = tuple(entries)
        self.default_timeout_ms = _checked_timeout(default_timeout_ms)
        self._selections: dict[tuple[str, Phase], Selection] = {}

    @property
    def entries(self) -> tuple[ChainEntry, ...]:
        """Fixed for the chain's life, so what each event selects can be kept."""
        return self._entries

    def fires(self, event: str, phase: Phase) -> bool:
        """Whether any entry is hooked on this event and phase."""
        mutators, validators = self._kept(event, phase)
        return bool(mutators or validators)

    def _selection(self, params: ChainExecutionParams) -> Selection:
        """`select_entries` for the params, kept per (event, phase) when no
        interceptors are named: sorting the entries costs more than a small run."""
        if params.interceptors is not None:
            return select_entries(self._entries, params)
        return self._kept(params.event, params.phase)

    def _kept(self, event: str, phase: Phase) -> Selection:
        if len(event) > MAX_KEPT_EVENT_LENGTH:
            return select_hooked(self._entries, event, phase)
        key = (event, phase)
        kept = self._selections.get(key)
        if kept is None:
            kept = select_hooked(self._entries, event, phase)
            if len(self._selections) >= MAX_KEPT_SELECTIONS:
                del self._selections[next(iter(self._selections))]
            self._selections[key] = kept
        return kept

    def check_selection(self, names: Sequence[str] | None) -> None:
        """Refuse a selection (``params.interceptors``) that names an unknown interceptor.

        Selecting by a misspelt name would run nothing and report success, so
        it is an error with a did-you-mean, as a misspelt name in settings is.
        """
        known = sorted({entry.name for entry in self.entries})
        for name in names or ():
            if name not in known:
                raise ChainConfigError(
                    f"no interceptor named `{name}` to select", help=name_hint(name, known)
                )

    async def execute(
        self, params: ChainExecutionParams, *, side: Side, span: TraceSpan | None = None
    ) -> ChainExecutionResult:
        """Run the chain for one event and phase, as the ``side`` of a trust boundary.

        Never raises for an interceptor's failure or a denial: the result's
        ``status`` and ``abortedAt`` say what happened. ``span``: the run's span, when
        the host traces (see ``chain.tracing``).
        """
        return await execute_chain(
            self._entries,
            params,
            side=side,
            default_timeout_ms=self.default_timeout_ms,
            selected=self._selection(params),
            span=span,
        )

    @classmethod
    @asynccontextmanager
    async def connect(
        cls,
        *,
        local: Mapping[str, InterceptorProvider] | Sequence[InterceptorProvider] = (),
        servers: Sequence[ServerSpec | str] = (),
        config: ChainConfig | None = None,
        overrides: Mapping[Selector, InterceptorOverrides] | None = None,
        configs: Mapping[Selector, dict[str, Any]] | None = None,
        default_timeout_ms: int | None = None,
        discovery_timeout_ms: int | None = None,
        errlog: TextIO | None = None,
    ) -> AsyncIterator[InterceptorChain]:
        """Open every host, discover, and yield the chain (closing servers on exit).

        ``local`` providers get ids ``local-1``, ``local-2``... unless given as
        a mapping. ``servers`` adds to the config file's servers; explicit
        ``overrides``, ``configs`` and timeouts win over the file's.
        """
        base = config or ChainConfig()
        specs = [
            *base.servers,
            *(ServerSpec.parse(s) if isinstance(s, str) else s for s in servers),
        ]
        async with AsyncExitStack() as stack:
            hosts = _local_hosts(local)
            remotes = [RemoteProvider(spec, errlog=errlog) for spec in specs]
            for remote in remotes:
                hosts.append(Host(remote.id, await stack.enter_async_context(remote)))
            stack.push_async_callback(_close_all, remotes)
            _check_unique(hosts)
            limit = (
                discovery_timeout_ms or base.discovery_timeout_ms or DEFAULT_DISCOVERY_TIMEOUT_MS
            )
            discovered = await discover_hosts(hosts, timeout_ms=limit)
            entries = build_entries(
                discovered,
                overrides=_layered(base.overrides, overrides or {}, merge_overrides),
                configs=_layered(
                    base.configs, configs or {}, lambda a, b: {**(a or {}), **(b or {})}
                ),
            )
            yield cls(entries, default_timeout_ms=default_timeout_ms or base.default_timeout_ms)


async def _close_all(remotes: list[RemoteProvider]) -> None:
    """Close every server at once: shutting down costs the slowest, not the sum."""
    async with anyio.create_task_group() as tg:
        for remote in remotes:
            tg.start_soon(remote.close)


def _layered(
    base: Mapping[Selector, _T],
    top: Mapping[Selector, _T],
    merge: Callable[[_T | None, _T | None], _T],
) -> dict[Selector, _T]:
    """Per selector, the API's settings over the config file's."""
    return {key: merge(base.get(key), top.get(key)) for key in {**base, **top}}


def _local_hosts(
    local: Mapping[str, InterceptorProvider] | Sequence[InterceptorProvider],
) -> list[Host]:
    if isinstance(local, Mapping):
        return [Host(host_id, provider) for host_id, provider in local.items()]
    return [Host(f"local-{index}", provider) for index, provider in enumerate(local, start=1)]


def _check_unique(hosts: list[Host]) -> None:
    seen: set[str] = set()
    for host in hosts:
        if host.id in seen:
            raise ChainConfigError(
                f"two hosts share the id `{host.id}`",
                help="give each server a distinct `id`",
            )
        seen.add(host.id)

"""Discovery: ask every host for its interceptors at once, and fail closed.

Local hosts answer from memory; remote ones send ``interceptors/list``. All
are asked in parallel, so start-up costs the slowest server, not the sum. If
any host fails or does not answer in time, discovery fails and names it:
a chain silently missing one server's interceptors would be a policy bypass.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import anyio

from policy_engine.wire import InterceptorDescriptor, InterceptorError

from .entry import Host
from .errors import DiscoveryError


@runtime_checkable
class Discoverable(Protocol):
    """A provider whose descriptors must be fetched before use (a remote server)."""

    async def discover(self) -> list[InterceptorDescriptor]: ...


async def discover_hosts(
    hosts: Sequence[Host], *, timeout_ms: int | None = None
) -> list[tuple[Host, list[InterceptorDescriptor]]]:
    """Each host with its descriptors, in the order the hosts were given."""
    found: dict[int, list[InterceptorDescriptor]] = {}
    failures: dict[str, str] = {}

    async def one(index: int, host: Host) -> None:
        try:
            with anyio.fail_after(timeout_ms / 1000 if timeout_ms else None):
                if isinstance(host.provider, Discoverable):
                    found[index] = await host.provider.discover()
                else:
                    found[index] = host.provider.descriptors()
        except TimeoutError:
            failures[host.id] = f"no answer within {timeout_ms} ms"
        except InterceptorError as err:
            reason = (err.data or {}).get("reason")
            failures[host.id] = f"{err.message} ({reason})" if reason else err.message
        except Exception as err:
            failures[host.id] = f"{type(err).__name__}: {err}"

    async with anyio.create_task_group() as tg:
        for index, host in enumerate(hosts):
            tg.start_soon(one, index, host)
    if failures:
        ordered = {h.id: failures[h.id] for h in hosts if h.id in failures}
        raise DiscoveryError(ordered)
    return [(host, found[index]) for index, host in enumerate(hosts)]

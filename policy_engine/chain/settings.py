"""Invoker-side settings per interceptor, and building chain entries from them.

Settings are keyed by a *selector*: a bare interceptor name applies on every
host serving that name; a ``(host id, name)`` pair applies to one host only
and wins field by field, which is how two servers' same-named interceptors get
different policies. A selector that matches nothing is an error, since a
mistyped name would otherwise silently leave an interceptor on its defaults.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from policy_engine.wire import InterceptorDescriptor, InterceptorOverrides
from policy_engine.wire.suggest import did_you_mean

from .entry import ChainEntry, Host
from .errors import ChainConfigError

Selector = str | tuple[str, str]


def build_entries(
    discovered: Sequence[tuple[Host, list[InterceptorDescriptor]]],
    overrides: Mapping[Selector, InterceptorOverrides] | None = None,
    configs: Mapping[Selector, dict[str, Any]] | None = None,
) -> list[ChainEntry]:
    """One entry per (host, interceptor), in host order then registration order."""
    overrides = overrides or {}
    configs = configs or {}
    _check_selectors(discovered, [*overrides, *configs])
    entries = []
    for host, descriptors in discovered:
        for descriptor in descriptors:
            name = descriptor.name
            entries.append(
                ChainEntry(
                    interceptor=descriptor,
                    host=host,
                    overrides=merge_overrides(overrides.get(name), overrides.get((host.id, name))),
                    config=_merge_config(configs.get(name), configs.get((host.id, name))),
                )
            )
    return entries


def merge_overrides(*layers: InterceptorOverrides | None) -> InterceptorOverrides:
    """Later layers win, one field at a time; unset fields fall through."""
    merged = InterceptorOverrides()
    for layer in layers:
        if layer is None:
            continue
        update = {key: getattr(layer, key) for key in layer.model_fields_set}
        merged = merged.model_copy(update={k: v for k, v in update.items() if v is not None})
    return merged


def _merge_config(*layers: dict[str, Any] | None) -> dict[str, Any] | None:
    present = [layer for layer in layers if layer is not None]
    if not present:
        return None
    merged: dict[str, Any] = {}
    for layer in present:
        merged.update(layer)
    return merged


def _check_selectors(
    discovered: Sequence[tuple[Host, list[InterceptorDescriptor]]], selectors: list[Selector]
) -> None:
    by_host = {host.id: {d.name for d in descriptors} for host, descriptors in discovered}
    every_name = sorted({name for names in by_host.values() for name in names})
    for selector in selectors:
        if isinstance(selector, str):
            if selector not in every_name:
                raise ChainConfigError(
                    f"settings for unknown interceptor `{selector}`",
                    help=name_hint(selector, every_name),
                )
            continue
        host_id, name = selector
        if host_id not in by_host:
            raise ChainConfigError(
                f"settings for `{name}` on unknown server `{host_id}`",
                help=name_hint(host_id, sorted(by_host)),
            )
        if name not in by_host[host_id]:
            raise ChainConfigError(
                f"server `{host_id}` serves no interceptor `{name}`",
                help=name_hint(name, sorted(by_host[host_id])),
            )


def name_hint(word: str, known: list[str]) -> str:
    """The closest known name, else the known names, for a selector that named nothing."""
    close = did_you_mean(word, known)
    if close:
        return close
    return "known: " + ", ".join(f"`{k}`" for k in known) if known else "nothing was discovered"

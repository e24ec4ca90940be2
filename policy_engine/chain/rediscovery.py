"""What changed on a remote server between discovery and a reconnect.

The chain was built from the first ``interceptors/list``: its order, modes,
failOpen and hooks all come from it. A server that restarts may come back
with other descriptors; invoking it under the old ones would run a message
under a policy nobody chose. So every new session lists again, and a message
the chain can no longer handle as it was built for fails closed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from policy_engine.wire import InterceptorDescriptor, InterceptorError, Phase
from policy_engine.wire.errors import INTERNAL_ERROR

# The descriptor fields the chain acts on; a change to any of them is drift.
CHAIN_FIELDS = ("type", "hooks", "mode", "fail_open", "priority_hint")
_WIRE_NAMES = {"fail_open": "failOpen", "priority_hint": "priorityHint"}


@dataclass(frozen=True)
class Drift:
    """Per interceptor, the chain fields that differ (or ``removed``); new interceptors."""

    changed: dict[str, list[str]] = field(default_factory=dict)
    added: tuple[InterceptorDescriptor, ...] = ()

    def conflict(self, name: str, event: str, phase: Phase) -> str | None:
        """Why ``name`` cannot run this message as the chain was built, or None."""
        fields = self.changed.get(name)
        if fields:
            return f"`{name}` changed {', '.join(fields)} since discovery"
        new = [d.name for d in self.added if d.hooks_event(event, phase)]
        if new:
            listed = ", ".join(f"`{n}`" for n in new)
            return f"new interceptor(s) {listed} hook {event} at {phase} and are not in the chain"
        return None


def compare(
    known: Sequence[InterceptorDescriptor], listed: Sequence[InterceptorDescriptor]
) -> Drift:
    now = {d.name: d for d in listed}
    changed: dict[str, list[str]] = {}
    for before in known:
        after = now.get(before.name)
        if after is None:
            changed[before.name] = ["removed"]
            continue
        fields = [
            _WIRE_NAMES.get(name, name)
            for name in CHAIN_FIELDS
            if _plain(getattr(before, name)) != _plain(getattr(after, name))
        ]
        if fields:
            changed[before.name] = fields
    names = {d.name for d in known}
    return Drift(changed, tuple(d for d in listed if d.name not in names))


def _plain(value: object) -> object:
    """Hooks and hints compare as data, not as model identity."""
    if isinstance(value, list):
        return [_plain(v) for v in value]
    dump = getattr(value, "model_dump", None)
    return dump() if callable(dump) else value


def drift_error(server: str, name: str, reason: str) -> InterceptorError:
    return InterceptorError(
        INTERNAL_ERROR,
        "Interceptor server changed its interceptors after reconnecting",
        {
            "server": server,
            "interceptor": name,
            "reason": f"{reason}; reconnect the chain to pick up the new descriptors",
        },
    )

"""The SEP's lifecycle events and how hooks match them.

A hook event matches an event name exactly, through the catch-all ``*``, or
through a namespace wildcard such as ``tools/*``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

STANDARD_EVENTS: tuple[str, ...] = (
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/read",
    "resources/subscribe",
    "sampling/createMessage",
    "elicitation/create",
    "roots/list",
    "llm/completion",
)

WILDCARD = "*"


def event_matches(hook_event: str, event: str) -> bool:
    """True when a hook declared on ``hook_event`` fires for ``event``.

    A filter value that is itself a wildcard matches only hooks declared with
    the same wildcard or ``*``, so listing ``tools/*`` does not return hooks
    on unrelated namespaces.
    """
    if hook_event in (WILDCARD, event):
        return True
    if hook_event.endswith("/*"):
        return event.startswith(hook_event[:-1]) and event != hook_event[:-1]
    return False


def any_event_matches(hook_events: Iterable[str], event: str) -> bool:
    return any(event_matches(hook_event, event) for hook_event in hook_events)


def is_namespaced(event: str) -> bool:
    """Custom events follow the SEP's ``namespace/operation`` convention."""
    namespace, sep, operation = event.partition("/")
    return bool(namespace) and bool(sep) and bool(operation)


class HookIndex:
    """Whether a list of hooks fires on an (event, phase), answered from a set.

    Built once per hook list and asked on every invoke: an event hooked by
    name or through `*` is a set lookup, and only the namespace wildcards
    (`tools/*`) are tested one by one, with `event_matches`.
    """

    __slots__ = ("_namespaces", "_pairs")

    def __init__(self, hooks: Iterable[tuple[Sequence[str], str]]) -> None:
        pairs: set[tuple[str, str]] = set()
        namespaces: list[tuple[str, str]] = []
        for events, phase in hooks:
            for event in events:
                pairs.add((event, phase))
                if event.endswith("/*"):
                    namespaces.append((event, phase))
        self._pairs = frozenset(pairs)
        self._namespaces = tuple(namespaces)

    def fires(self, event: str, phase: str) -> bool:
        pairs = self._pairs
        if (event, phase) in pairs or (WILDCARD, phase) in pairs:
            return True
        return any(p == phase and event_matches(h, event) for h, p in self._namespaces)

"""Several backends seen as one server: merged handshakes and lists, and who owns what.

The naming rule is stable and symmetric: a tool or prompt name that only one
backend offers is shown as is; a name that two or more backends offer is shown
as ``BACKEND__NAME`` for every one of them (so no backend's copy silently wins,
and adding a backend never renames another backend's unique names). Resource
URIs are not renamed: the first backend (in configuration order) that lists a
URI owns it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from policy_engine import __version__

SEPARATOR = "__"
GATEWAY_NAME = "policyc-gateway"

# list method -> (result key, identifier field, call that uses one element)
NAMED_LISTS = {"tools/list": "tools", "prompts/list": "prompts"}
URI_LISTS = {"resources/list": "resources", "resources/templates/list": "resourceTemplates"}


def exposed_name(backend: str, name: str, collides: bool) -> str:
    return f"{backend}{SEPARATOR}{name}" if collides else name


@dataclass
class Routes:
    """Exposed name (or URI) -> (owning backend, name the backend knows)."""

    tools: dict[str, tuple[str, str]] = field(default_factory=dict)
    prompts: dict[str, tuple[str, str]] = field(default_factory=dict)
    resources: dict[str, str] = field(default_factory=dict)

    def table(self, method: str) -> dict[str, tuple[str, str]]:
        return self.tools if method.startswith("tools/") else self.prompts


CACHE_HINTS = ("resultType", "cacheScope", "ttlMs")
"""The 2026-07-28 fields of a list result besides its items (required there)."""


def merge_cache_hints(hints: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A merged list's 2026-07-28 caching fields: the strictest of its parts (private if
    any part is or says nothing, the shortest time to live, 0 if any part has none)."""
    if not any(hints):
        return {}
    scopes = [h.get("cacheScope") for h in hints]
    ttls = [h.get("ttlMs") for h in hints]
    known = [t for t in ttls if isinstance(t, int) and not isinstance(t, bool)]
    return {
        "resultType": "complete",
        "cacheScope": "public" if all(s == "public" for s in scopes) else "private",
        "ttlMs": min(known) if len(known) == len(ttls) else 0,
    }


def merge_named(
    method: str, pages: Sequence[tuple[str, dict[str, Any]]], routes: Routes
) -> dict[str, Any]:
    """One ``tools/list`` or ``prompts/list`` result from every backend's (full) result."""
    key = NAMED_LISTS[method]
    counts: Counter[str] = Counter()
    for _, result in pages:
        for name in {item.get("name") for item in result.get(key, []) if isinstance(item, dict)}:
            if isinstance(name, str):
                counts[name] += 1
    table = routes.table(method)
    table.clear()
    merged: list[dict[str, Any]] = []
    for backend, result in pages:
        for item in result.get(key, []):
            if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                continue
            shown = exposed_name(backend, item["name"], counts[item["name"]] > 1)
            table[shown] = (backend, item["name"])
            merged.append({**item, "name": shown})
    return {key: merged}


def merge_uris(
    method: str, pages: Sequence[tuple[str, dict[str, Any]]], routes: Routes
) -> dict[str, Any]:
    """``resources/list`` or ``resources/templates/list``: first owner of a URI wins."""
    key = URI_LISTS[method]
    field_name = "uri" if key == "resources" else "uriTemplate"
    merged: list[dict[str, Any]] = []
    seen: set[str] = set()
    for backend, result in pages:
        for item in result.get(key, []):
            uri = item.get(field_name) if isinstance(item, dict) else None
            if not isinstance(uri, str) or uri in seen:
                continue
            seen.add(uri)
            if key == "resources":
                routes.resources[uri] = backend
            merged.append(item)
    return {key: merged}


def merge_handshakes(results: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """The gateway's own ``initialize`` (or ``server/discover``) result over several backends.

    Capabilities are the union of the backends'; instructions are each
    backend's, labelled; the protocol version is the first backend's.
    """
    first = next(iter(results.values()))
    merged: dict[str, Any] = {
        k: v for k, v in first.items() if k not in ("serverInfo", "instructions", "capabilities")
    }
    capabilities: dict[str, Any] = {}
    for result in results.values():
        _deep_union(capabilities, result.get("capabilities") or {})
    merged["capabilities"] = capabilities
    merged["serverInfo"] = {"name": GATEWAY_NAME, "version": __version__}
    notes = [
        f"[{name}] {result['instructions']}"
        for name, result in results.items()
        if isinstance(result.get("instructions"), str) and result["instructions"]
    ]
    if notes:
        merged["instructions"] = "\n\n".join(notes)
    return merged


def _deep_union(into: dict[str, Any], other: Mapping[str, Any]) -> None:
    for key, value in other.items():
        if isinstance(value, Mapping) and isinstance(into.get(key), dict):
            _deep_union(into[key], value)
        elif isinstance(value, Mapping):
            into[key] = {}
            _deep_union(into[key], value)
        elif key not in into or value is True:
            into[key] = value

"""What a 2026-07-28 client needs from backends of either protocol era.

A 2025-era backend (the npm reference servers) answers a 2026-07-28 request
with a 2025 result: no ``resultType``, and lists without ``cacheScope`` and
``ttlMs``, all of which the 2026-07-28 SDK client requires, so it would reject
every successful answer. The gateway adds them, choosing what is safe when
the backend said nothing: a complete result, and a list no one may cache
(``private``, ``ttlMs`` 0). A 2026 backend's own fields pass untouched.
"""

from __future__ import annotations

from typing import Any

from mcp_types import PROTOCOL_VERSION_META_KEY
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from .federation import NAMED_LISTS, URI_LISTS

_LISTS = {*NAMED_LISTS, *URI_LISTS}
_UNCACHED = {"cacheScope": "private", "ttlMs": 0}


def is_modern(params: dict[str, Any] | None) -> bool:
    """Whether a request carries a 2026-07-28 (or later) envelope."""
    meta = (params or {}).get("_meta")
    version = meta.get(PROTOCOL_VERSION_META_KEY) if isinstance(meta, dict) else None
    return version in MODERN_PROTOCOL_VERSIONS


def modern_result(method: str, result: dict[str, Any]) -> dict[str, Any]:
    """``result`` with the fields a 2026-07-28 client requires, where it lacks them."""
    missing: dict[str, Any] = {} if "resultType" in result else {"resultType": "complete"}
    if method in _LISTS:
        missing.update({k: v for k, v in _UNCACHED.items() if k not in result})
    return {**result, **missing} if missing else result

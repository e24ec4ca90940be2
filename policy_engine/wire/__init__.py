"""SEP-2624 wire types. This layer imports neither the MCP SDK nor anything above it.

Names load on first use (PEP 562), so code that needs only the vocabulary
(`constants`, `events`) never pays for building the pydantic models.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._base import INT32_MAX, INT32_MIN, InterceptorType, Phase, Severity, WireModel
    from .chain import (
        AbortedAt,
        ChainExecutionParams,
        ChainExecutionResult,
        ChainResultEntry,
        ChainStatus,
        InterceptorOverrides,
        Side,
        ValidationSummary,
    )
    from .constants import Mode
    from .descriptor import Compat, Hook, InterceptorDescriptor
    from .errors import InterceptorError, PolicycError
    from .events import (
        STANDARD_EVENTS,
        WILDCARD,
        HookIndex,
        any_event_matches,
        event_matches,
    )
    from .invoke import (
        InvocationContext,
        InvokeParams,
        InvokeResult,
        ListInterceptorsParams,
        ListInterceptorsResult,
        MutationResult,
        Principal,
        Suggestion,
        ValidationMessage,
        ValidationResult,
    )
    from .priority import PhasePriority, PriorityHint, resolve_priority
    from .provider import InterceptorProvider, ProviderTraits
    from .refusal import Refusal
    from .run import RunState


_HOMES = {
    "AbortedAt": ".chain",
    "ChainExecutionParams": ".chain",
    "ChainExecutionResult": ".chain",
    "ChainResultEntry": ".chain",
    "ChainStatus": ".chain",
    "Compat": ".descriptor",
    "Hook": ".descriptor",
    "INT32_MAX": ".constants",
    "INT32_MIN": ".constants",
    "InterceptorDescriptor": ".descriptor",
    "InterceptorError": ".errors",
    "PolicycError": ".errors",
    "InterceptorOverrides": ".chain",
    "InterceptorProvider": ".provider",
    "InterceptorType": ".constants",
    "InvocationContext": ".invoke",
    "InvokeParams": ".invoke",
    "InvokeResult": ".invoke",
    "ListInterceptorsParams": ".invoke",
    "ListInterceptorsResult": ".invoke",
    "Mode": ".constants",
    "MutationResult": ".invoke",
    "Phase": ".constants",
    "PhasePriority": ".priority",
    "Principal": ".invoke",
    "PriorityHint": ".priority",
    "ProviderTraits": ".provider",
    "Refusal": ".refusal",
    "RunState": ".run",
    "STANDARD_EVENTS": ".events",
    "Severity": ".constants",
    "Side": ".chain",
    "Suggestion": ".invoke",
    "ValidationMessage": ".invoke",
    "ValidationResult": ".invoke",
    "ValidationSummary": ".chain",
    "WILDCARD": ".events",
    "HookIndex": ".events",
    "WireModel": "._base",
    "any_event_matches": ".events",
    "event_matches": ".events",
    "resolve_priority": ".priority",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home, __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "INT32_MAX",
    "INT32_MIN",
    "STANDARD_EVENTS",
    "WILDCARD",
    "AbortedAt",
    "ChainExecutionParams",
    "ChainExecutionResult",
    "ChainResultEntry",
    "ChainStatus",
    "Compat",
    "Hook",
    "HookIndex",
    "InterceptorDescriptor",
    "InterceptorError",
    "InterceptorOverrides",
    "InterceptorProvider",
    "InterceptorType",
    "InvocationContext",
    "InvokeParams",
    "InvokeResult",
    "ListInterceptorsParams",
    "ListInterceptorsResult",
    "Mode",
    "MutationResult",
    "Phase",
    "PhasePriority",
    "PolicycError",
    "Principal",
    "PriorityHint",
    "ProviderTraits",
    "Refusal",
    "RunState",
    "Severity",
    "Side",
    "Suggestion",
    "ValidationMessage",
    "ValidationResult",
    "ValidationSummary",
    "WireModel",
    "any_event_matches",
    "event_matches",
    "resolve_priority",
]

"""SEP-2624 wire types. This layer imports neither the MCP SDK nor anything above it."""

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
from .descriptor import Compat, Hook, InterceptorDescriptor, Mode
from .errors import InterceptorError
from .events import STANDARD_EVENTS, WILDCARD, any_event_matches, event_matches
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
from .provider import InterceptorProvider

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
    "Principal",
    "PriorityHint",
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

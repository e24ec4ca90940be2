"""`--limit-*` options: where rate-limit counters live (the flow store's Redis) and their bounds."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from ..compiler.flows import FlowRuntime
from ..compiler.rate_limits import RateLimitRuntime
from ..limits import MIN_KEYS, TIMEOUT_RANGE_S, LimitBounds, LimitStoreError, MemoryLimitStore
from .inputs import fail

F = TypeVar("F", bound=Callable[..., Any])
_DEFAULTS = LimitBounds()


def rate_limit_options(command: F) -> F:
    command = click.option(
        "--limit-timeout",
        type=click.FloatRange(*TIMEOUT_RANGE_S),
        default=_DEFAULTS.timeout_s,
        show_default=True,
        help="Seconds one rate-limit store round trip may take; slower fails closed "
        "(or open, for a `failing open` limit).",
    )(command)
    return click.option(
        "--limit-max-keys",
        type=click.IntRange(MIN_KEYS),
        default=_DEFAULTS.max_keys,
        show_default=True,
        help="Live rate-limit counters per rule; a request needing a new one past this is "
        "refused until some expire (live counters are never dropped).",
    )(command)


def rate_limit_runtime(
    flow_store: str | None, flows: FlowRuntime, limit_max_keys: int, limit_timeout: float
) -> RateLimitRuntime:
    """Counters in this process, or in the `--flow-store` Redis (named with its key)."""
    bounds = LimitBounds(limit_max_keys, limit_timeout)
    if flow_store is None:
        return RateLimitRuntime(MemoryLimitStore(bounds), flows.fingerprinter)
    from ..limits.redis_store import RedisLimitStore

    try:
        return RateLimitRuntime(RedisLimitStore(flow_store, bounds), flows.fingerprinter)
    except LimitStoreError as exc:
        fail(str(exc))

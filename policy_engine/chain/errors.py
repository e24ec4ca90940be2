"""Errors of chain set-up, and the JSON-RPC error a failed chain maps to.

Set-up errors (a bad override, an unreachable server) are raised before any
payload is seen and say exactly which interceptor or server is at fault. A
failed execution is not an exception: it is a ``ChainExecutionResult`` whose
status says why, and :func:`chain_error` turns it into the SEP's error object
for whoever must answer a JSON-RPC request with it (the gateway).
"""

from __future__ import annotations

from typing import Any

from policy_engine.wire import ChainExecutionResult, InterceptorError, PolicycError
from policy_engine.wire.errors import (
    chain_mutation_failed,
    chain_validation_failed,
    timed_out,
    validation_error_item,
)


class ChainConfigError(PolicycError, ValueError):
    """The chain cannot be built as configured (overrides, config file, server list)."""

    def __init__(self, message: str, *, help: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.help = help

    def __str__(self) -> str:
        return self.message if self.help is None else f"{self.message}\nhelp: {self.help}"


class DiscoveryError(PolicycError, RuntimeError):
    """``interceptors/list`` failed on at least one host; the chain refuses to start.

    Discovery is fail-closed: running without one server's interceptors would
    silently drop its policy.
    """

    def __init__(self, failures: dict[str, str]) -> None:
        self.failures = failures
        detail = "; ".join(f"`{host}`: {reason}" for host, reason in failures.items())
        super().__init__(f"interceptor discovery failed on {detail}")


def chain_error(result: ChainExecutionResult) -> InterceptorError | None:
    """The SEP's JSON-RPC error for a chain that did not succeed, ``None`` if it did.

    ``validation_failed`` lists every blocking verdict (active validators whose
    effective severity is ``error``, including validators that crashed without
    failOpen); ``mutation_failed`` names the mutator; ``timeout`` names the
    interceptor that was running and the limit that expired.
    """
    aborted = result.aborted_at
    if result.status == "success" or aborted is None:
        return None
    if result.status == "mutation_failed":
        return chain_mutation_failed(aborted.interceptor, aborted.reason)
    if result.status == "timeout":
        return timed_out(aborted.interceptor, aborted.timeout_ms or 0, result.phase)
    error = chain_validation_failed(_validation_errors(result))
    retry = _retry_after_ms(result)
    if retry is not None and error.data is not None:
        error.data["retryAfterMs"] = retry
    return error


def _retry_after_ms(result: ChainExecutionResult) -> int | None:
    """When a refusal by rate limits alone clears: the longest wait any blocking one gave.

    Only if every blocking validator was a limit's: a refusal for any other reason
    will not clear by waiting, and a client told to retry would only retry."""
    waits: list[int] = []
    for entry in result.results:
        if entry.type != "validation" or entry.mode == "audit" or entry.severity != "error":
            continue
        wait = (entry.info or {}).get("retryAfterMs")
        if not isinstance(wait, int) or entry.error is not None:
            return None
        waits.append(wait)
    return max(waits) if waits else None


def _validation_errors(result: ChainExecutionResult) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for entry in result.results:
        if entry.type != "validation" or entry.mode == "audit" or entry.severity != "error":
            continue
        if entry.error is not None:
            items.append(validation_error_item(entry.interceptor, "error", entry.error))
            continue
        messages = [m for m in entry.messages or [] if m.severity == "error"]
        if not messages:
            items.append(validation_error_item(entry.interceptor, "error", "validation failed"))
        for message in messages:
            items.append(
                validation_error_item(entry.interceptor, "error", message.message, message.path)
            )
    return items

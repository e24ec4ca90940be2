"""The check every rule-grouping property makes: grouped equals one by one."""

from __future__ import annotations

from typing import Any

from policy_engine.compiler import PolicySet, Trace


def assert_same_as_one_by_one(policy: PolicySet, payload: dict[str, Any]) -> None:
    """The planned (grouped) run of mutator `g` gives what its rules give alone."""
    grouped = policy.invoke_sync("g", "tools/call", "request", payload)
    # A trace runs every rule on its own (the reference path).
    alone = policy.invoke_sync("g", "tools/call", "request", payload, trace=Trace())
    assert grouped.payload == alone.payload
    assert grouped.modified == alone.modified
    assert grouped.info == alone.info

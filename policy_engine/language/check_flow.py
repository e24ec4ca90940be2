"""Checks of the flow rules across the set: labels read and written, server maps used.

Flow labels are the set's: a `remember` in one validator can feed a `flow`
rule in another, since both read and write the same session state.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..wire.suggest import did_you_mean
from . import ast
from .diagnostics import Code, Diagnostic
from .model import PolicySetModel


def check_flows(model: PolicySetModel) -> Iterator[Diagnostic]:
    remembered: dict[str, ast.Remember] = {}
    read: set[str] = set()
    for interceptor in model.interceptors:
        for rule in interceptor.rules:
            if isinstance(rule, ast.Remember):
                remembered.setdefault(rule.label, rule)
            elif isinstance(rule, ast.FlowRule) and rule.label is not None:
                read.add(rule.label)
    for interceptor in model.interceptors:
        flows = [r for r in interceptor.rules if isinstance(r, ast.FLOW_RULES)]
        for rule in flows:
            if (
                isinstance(rule, ast.FlowRule)
                and rule.label is not None
                and rule.label not in remembered
            ):
                close = did_you_mean(rule.label, remembered)
                yield Diagnostic(
                    Code.E231,
                    f"flow label `{rule.label}` is never remembered",
                    rule.span,
                    close or f"add `remember PATTERN as {rule.label}` to a validator of the set",
                )
        for rule in flows:
            if isinstance(rule, ast.FlowRule):
                yield from _check_servers(rule, set(interceptor.servers.values()))
        if interceptor.servers and not flows:
            first = next(s for s in interceptor.node.statements if isinstance(s, ast.ServerMap))
            yield Diagnostic(
                Code.W331,
                f"`{interceptor.name}` maps tools to servers but has no flow rule",
                first.span,
                "the map only attributes messages for `flow` and `remember` rules of the same "
                "validator; add one, or remove the map",
            )
    for label, rule in remembered.items():
        if label not in read:
            yield Diagnostic(
                Code.W330,
                f"flow label `{label}` is remembered but never read",
                rule.span,
                f"add `deny flow {label} across servers` (or remove the `remember`)",
            )


def _check_servers(rule: ast.FlowRule, mapped: set[str]) -> Iterator[Diagnostic]:
    """A `from` / `to` server the validator's map does not know is likely a typo (the
    gateway names backends itself, so without a map any name may be right)."""
    named = dict.fromkeys([*rule.sources, *rule.destinations])
    for server in named if mapped else ():
        if server not in mapped:
            yield Diagnostic(
                Code.W332,
                f"flow rule names server `{server}`, which the validator's `server` lines "
                "do not map",
                rule.span,
                did_you_mean(server, sorted(mapped))
                or f"add `server {server} tools [...]`, or name a mapped server",
            )
    if rule.sources and set(rule.sources) == set(rule.destinations) and len(named) == 1:
        yield Diagnostic(
            Code.W333,
            f"flow rule only goes from `{rule.sources[0]}` to itself, so it never fires",
            rule.span,
            "a value may go back to the server it came from; name another server in `to`",
        )

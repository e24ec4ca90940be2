"""Event names: the SEP's list, `*`, `namespace/*` wildcards, and custom `namespace/op`.

A near miss of a standard event (`tool/call`, `sampling/createMesage`) is an
error (E107): a hook on it would never run, and CI should say so. A custom
event that happens to be close to a standard one is declared with a
top-level `event NAME`.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..wire.events import STANDARD_EVENTS, WILDCARD, is_namespaced
from ..wire.suggest import closest
from . import ast
from .diagnostics import Code, Diagnostic

_NAMESPACES = sorted({e.split("/")[0] for e in STANDARD_EVENTS})


_DECLARE_HELP = " If it is a custom event, declare it at the top of the file: `event {name}`"


def declared_events(files: list[ast.PolicyFile]) -> frozenset[str]:
    return frozenset(
        event.name
        for policy in files
        for item in policy.items
        if isinstance(item, ast.EventDecl)
        for event in item.events
    )


def check_event_name(
    event: ast.EventName, declared: frozenset[str] = frozenset()
) -> Iterator[Diagnostic]:
    name = event.name
    if name == WILDCARD or name in STANDARD_EVENTS or name in declared:
        return
    close = closest(name, STANDARD_EVENTS, cutoff=0.75)
    hint = f"did you mean `{close[0]}`?" if close else None
    if name.endswith("/*"):
        namespace = name[:-2]
        if "/" in namespace or not namespace:
            yield Diagnostic(
                Code.E101,
                f"malformed event wildcard `{name}`",
                event.span,
                "use `*` or `namespace/*`",
            )
        elif namespace not in _NAMESPACES:
            ns_close = closest(namespace, _NAMESPACES)
            if ns_close:
                yield Diagnostic(
                    Code.E107,
                    f"no standard event in namespace `{namespace}`",
                    event.span,
                    f"did you mean `{ns_close[0]}/*`?" + _DECLARE_HELP.format(name=name),
                )
        return
    if not is_namespaced(name) or name.count("/") > 1:
        yield Diagnostic(
            Code.E101,
            f"unknown event `{name}`",
            event.span,
            hint or "custom events are written `namespace/operation`, e.g. `billing/charge`",
        )
    elif close:
        yield Diagnostic(
            Code.E107,
            f"`{name}` is not a standard event",
            event.span,
            f"{hint}{_DECLARE_HELP.format(name=name)}",
        )


def check_events(
    interceptor: ast.Interceptor, declared: frozenset[str] = frozenset()
) -> Iterator[Diagnostic]:
    for statement in interceptor.statements:
        if isinstance(statement, ast.Hook):
            for event in statement.events:
                yield from check_event_name(event, declared)

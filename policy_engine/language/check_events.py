"""Event names: the SEP's list, `*`, `namespace/*` wildcards, and custom `namespace/op`."""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from ..wire.events import STANDARD_EVENTS, WILDCARD, is_namespaced
from . import ast
from .diagnostics import Diagnostic
from .resolve import error, warning

_NAMESPACES = sorted({e.split("/")[0] for e in STANDARD_EVENTS})


def check_event_name(event: ast.EventName) -> Iterator[Diagnostic]:
    name = event.name
    if name == WILDCARD or name in STANDARD_EVENTS:
        return
    close = difflib.get_close_matches(name, STANDARD_EVENTS, n=1, cutoff=0.75)
    hint = f"did you mean `{close[0]}`?" if close else None
    if name.endswith("/*"):
        namespace = name[:-2]
        if "/" in namespace or not namespace:
            yield error(
                "E101", f"malformed event wildcard `{name}`", event.span, "use `*` or `namespace/*`"
            )
        elif namespace not in _NAMESPACES:
            ns_close = difflib.get_close_matches(namespace, _NAMESPACES, n=1)
            if ns_close:
                yield warning(
                    "W101",
                    f"no standard event in namespace `{namespace}`",
                    event.span,
                    f"did you mean `{ns_close[0]}/*`?",
                )
        return
    if not is_namespaced(name) or name.count("/") > 1:
        yield error(
            "E101",
            f"unknown event `{name}`",
            event.span,
            hint or "custom events are written `namespace/operation`, e.g. `billing/charge`",
        )
    elif close:
        yield warning("W101", f"`{name}` is not a standard event", event.span, hint)


def check_events(interceptor: ast.Interceptor) -> Iterator[Diagnostic]:
    for statement in interceptor.statements:
        if isinstance(statement, ast.Hook):
            for event in statement.events:
                yield from check_event_name(event)

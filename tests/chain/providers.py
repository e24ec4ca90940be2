"""Small in-process interceptor hosts for chain tests.

Each interceptor is a Python coroutine over ``InvokeParams`` that returns the
type-specific result fields; the host adds ``interceptor``, ``type`` and
``phase`` and records every call in a shared :class:`Journal`, so tests can
see which host ran what, in which order, with which payload.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from policy_engine.chain import ChainEntry, Host
from policy_engine.wire import (
    InterceptorDescriptor,
    InvokeParams,
    MutationResult,
    ValidationResult,
)
from policy_engine.wire.errors import unknown_interceptor

Handler = Callable[[InvokeParams], Awaitable[dict[str, Any]]]


@dataclass
class Journal:
    """Who started when: ``name@host`` strings in call order, plus the params seen."""

    started: list[str] = field(default_factory=list)
    params: dict[str, list[InvokeParams]] = field(default_factory=dict)

    def seen(self, key: str) -> InvokeParams:
        (params,) = self.params[key]
        return params


@dataclass
class Scripted:
    descriptor: InterceptorDescriptor
    handler: Handler


class ScriptedProvider:
    """Implements ``InterceptorProvider`` with Python handlers."""

    def __init__(self, host: str, *interceptors: Scripted, journal: Journal | None = None):
        self.host = host
        self.journal = journal or Journal()
        self._by_name = {s.descriptor.name: s for s in interceptors}

    def descriptors(self) -> list[InterceptorDescriptor]:
        return [s.descriptor for s in self._by_name.values()]

    async def invoke(self, params: InvokeParams) -> ValidationResult | MutationResult:
        scripted = self._by_name.get(params.name)
        if scripted is None:
            raise unknown_interceptor(params.name)
        key = f"{params.name}@{self.host}"
        self.journal.started.append(key)
        self.journal.params.setdefault(key, []).append(params)
        body = await scripted.handler(params)
        head = {"interceptor": params.name, "phase": params.phase}
        if scripted.descriptor.type == "validation":
            return ValidationResult.model_validate({**head, **body})
        return MutationResult.model_validate({**head, **body})


def _descriptor(
    name: str,
    kind: str,
    events: Sequence[str],
    phases: Sequence[str],
    hooks: list[dict[str, Any]] | None,
    extra: dict[str, Any],
) -> InterceptorDescriptor:
    wire_hooks = hooks or [{"events": list(events), "phase": phase} for phase in phases]
    return InterceptorDescriptor.model_validate(
        {"name": name, "type": kind, "hooks": wire_hooks, **extra}
    )


def validator(
    name: str,
    handler: Handler | None = None,
    *,
    events: Sequence[str] = ("tools/call",),
    phases: Sequence[str] = ("request", "response"),
    hooks: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> Scripted:
    return Scripted(
        _descriptor(name, "validation", events, phases, hooks, extra), handler or allow()
    )


def mutator(
    name: str,
    handler: Handler,
    *,
    events: Sequence[str] = ("tools/call",),
    phases: Sequence[str] = ("request", "response"),
    hooks: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> Scripted:
    return Scripted(_descriptor(name, "mutation", events, phases, hooks, extra), handler)


def entries(*providers: ScriptedProvider) -> list[ChainEntry]:
    """Chain entries for every interceptor of every provider, no overrides."""
    return [
        ChainEntry(interceptor=d, host=Host(p.host, p)) for p in providers for d in p.descriptors()
    ]


# handlers


def allow(**fields: Any) -> Handler:
    async def handle(params: InvokeParams) -> dict[str, Any]:
        return {"valid": True, **fields}

    return handle


def verdict(**fields: Any) -> Handler:
    async def handle(params: InvokeParams) -> dict[str, Any]:
        return dict(fields)

    return handle


def deny(message: str = "denied", severity: str | None = "error") -> Handler:
    body: dict[str, Any] = {"valid": False, "messages": [{"message": message, "severity": "error"}]}
    if severity is not None:
        body["severity"] = severity
    return verdict(**body)


def append(tag: str) -> Handler:
    """A mutator that appends ``tag`` to ``payload["trail"]``."""

    async def handle(params: InvokeParams) -> dict[str, Any]:
        payload = dict(params.payload)
        payload["trail"] = [*payload.get("trail", []), tag]
        return {"modified": True, "payload": payload}

    return handle


def crash(message: str = "boom") -> Handler:
    async def handle(params: InvokeParams) -> dict[str, Any]:
        raise RuntimeError(message)

    return handle


def hang(cancelled: anyio.Event) -> Handler:
    """Never answers; sets ``cancelled`` when the chain gives up on it."""

    async def handle(params: InvokeParams) -> dict[str, Any]:
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        raise AssertionError("unreachable")

    return handle


def after(event: anyio.Event, then: Handler) -> Handler:
    """Wait for ``event``, then behave like ``then``."""

    async def handle(params: InvokeParams) -> dict[str, Any]:
        await event.wait()
        return await then(params)

    return handle


def signal(event: anyio.Event, then: Handler) -> Handler:
    """Set ``event``, then behave like ``then``."""

    async def handle(params: InvokeParams) -> dict[str, Any]:
        event.set()
        return await then(params)

    return handle

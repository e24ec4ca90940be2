"""Small in-code interceptor providers for the server tests.

The behaviours carry the conformance suite's names, so ``serve_fixture.py
--specs FILE`` is also a second, independent implementation that
``policyc conformance --server`` is tested against (tests/conformance/).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio

from policy_engine.wire import (
    Hook,
    InterceptorDescriptor,
    InvokeParams,
    MutationResult,
    ValidationMessage,
    ValidationResult,
)
from policy_engine.wire.errors import InterceptorError

Result = ValidationResult | MutationResult
Behaviour = Callable[[InvokeParams], Awaitable[Result]]


def _note(payload: Any) -> Any:
    arguments = payload.get("arguments") if isinstance(payload, dict) else None
    return arguments.get("note") if isinstance(arguments, dict) else None


async def allow_all(params: InvokeParams) -> Result:
    return ValidationResult(interceptor=params.name, phase=params.phase, valid=True)


async def deny_all(params: InvokeParams) -> Result:
    return ValidationResult(
        interceptor=params.name,
        phase=params.phase,
        valid=False,
        severity="error",
        messages=[ValidationMessage(message="denied by policy", severity="error")],
    )


async def require_uppercase_note(params: InvokeParams) -> Result:
    note = _note(params.payload)
    if isinstance(note, str) and note == note.upper():
        return await allow_all(params)
    return ValidationResult(
        interceptor=params.name,
        phase=params.phase,
        valid=False,
        severity="error",
        messages=[ValidationMessage(message="note must be uppercase", severity="error")],
    )


async def uppercase_note(params: InvokeParams) -> Result:
    note = _note(params.payload)
    if not isinstance(note, str):
        return MutationResult(
            interceptor=params.name, phase=params.phase, modified=False, payload=params.payload
        )
    payload = dict(params.payload)
    payload["arguments"] = {**payload["arguments"], "note": note.upper()}
    return MutationResult(
        interceptor=params.name, phase=params.phase, modified=True, payload=payload
    )


async def crash(params: InvokeParams) -> Result:
    raise RuntimeError("evaluation blew up")


async def slow(params: InvokeParams) -> Result:
    """Sleeps ``config.delayMs`` (default 60 s): the timeout tests cut it short."""
    delay_ms = (params.config or {}).get("delayMs", 60_000)
    await anyio.sleep(delay_ms / 1000)
    return await allow_all(params)


async def sep_error(params: InvokeParams) -> Result:
    raise InterceptorError(-32602, "Interceptor validation failed", {"validationErrors": []})


class Gate:
    """``gate`` blocks until ``release`` is invoked: proves invokes run concurrently."""

    def __init__(self) -> None:
        self._event = anyio.Event()

    async def wait(self, params: InvokeParams) -> Result:
        await self._event.wait()
        self._event = anyio.Event()
        return await allow_all(params)

    async def release(self, params: InvokeParams) -> Result:
        self._event.set()
        return await allow_all(params)


BEHAVIOURS: dict[str, tuple[str, Behaviour]] = {
    "allow-all": ("validation", allow_all),
    "deny-all": ("validation", deny_all),
    "require-uppercase-note": ("validation", require_uppercase_note),
    "uppercase-note": ("mutation", uppercase_note),
    "crash": ("validation", crash),
    "slow": ("validation", slow),
    "sep-error": ("validation", sep_error),
}


@dataclass
class Entry:
    descriptor: InterceptorDescriptor
    behaviour: Behaviour


class FixtureProvider:
    """An ``InterceptorProvider`` built from fixture-style interceptor specs."""

    def __init__(self, specs: list[dict[str, Any]]) -> None:
        gate = Gate()
        behaviours = {
            **BEHAVIOURS,
            "gate": ("validation", gate.wait),
            "release": ("validation", gate.release),
        }
        self._entries: dict[str, Entry] = {}
        for spec in specs:
            kind, behaviour = behaviours[spec["behavior"]]
            phases = spec.get("phases", "both")
            phase_list = ["request", "response"] if phases == "both" else [phases]
            events = spec.get("events", ["tools/call"])
            descriptor = InterceptorDescriptor.model_validate(
                {
                    "name": spec["name"],
                    "type": spec.get("type", kind),
                    "hooks": [Hook(events=events, phase=phase) for phase in phase_list],
                    **({"mode": spec["mode"]} if "mode" in spec else {}),
                    **({"failOpen": spec["failOpen"]} if "failOpen" in spec else {}),
                }
            )
            self._entries[descriptor.name] = Entry(descriptor, behaviour)

    def descriptors(self) -> list[InterceptorDescriptor]:
        return [entry.descriptor for entry in self._entries.values()]

    async def invoke(self, params: InvokeParams) -> Result:
        return await self._entries[params.name].behaviour(params)


DEFAULT_SPECS: list[dict[str, Any]] = [
    {"name": "allow-all", "behavior": "allow-all"},
    {"name": "deny-all", "behavior": "deny-all"},
    {"name": "uppercase-note", "behavior": "uppercase-note"},
    {"name": "crash", "behavior": "crash"},
    {"name": "slow", "behavior": "slow"},
    {"name": "sep-error", "behavior": "sep-error"},
    {"name": "gate", "behavior": "gate"},
    {"name": "release", "behavior": "release"},
    {"name": "prompt-guard", "behavior": "allow-all", "events": ["prompts/*"], "phases": "request"},
    {"name": "everything", "behavior": "allow-all", "events": ["*"], "phases": "response"},
]

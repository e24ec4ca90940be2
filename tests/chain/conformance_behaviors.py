"""The conformance suite's named behaviors, bound to interceptors.

The suite's adapter contract (docs/conformance.md) names behaviors such as
``deny-all`` and leaves it to the implementation to bind each one to a real
interceptor. This module is the only place that decides what that is. Today
each behavior is a Python handler served by an in-process provider; to
certify compiled ``.policy`` files instead, replace :func:`bind_interceptors`
with a function that compiles one policy per behavior and returns its
provider. Nothing else in the adapter needs to change.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from policy_engine.wire import InterceptorProvider, InvokeParams

from .providers import Scripted, ScriptedProvider, mutator, validator

Handler = Callable[[InvokeParams], Awaitable[dict[str, Any]]]


def _note(payload: Any) -> Any:
    arguments = payload.get("arguments") if isinstance(payload, dict) else None
    return arguments.get("note") if isinstance(arguments, dict) else None


def _deny(message: str) -> dict[str, Any]:
    return {
        "valid": False,
        "severity": "error",
        "messages": [{"message": message, "severity": "error"}],
    }


async def allow_all(params: InvokeParams) -> dict[str, Any]:
    return {"valid": True}


async def deny_all(params: InvokeParams) -> dict[str, Any]:
    return _deny("denied by policy")


async def require_note(params: InvokeParams) -> dict[str, Any]:
    note = _note(params.payload)
    return {"valid": True} if isinstance(note, str) and note else _deny("note is required")


async def require_uppercase_note(params: InvokeParams) -> dict[str, Any]:
    note = _note(params.payload)
    if isinstance(note, str) and note == note.upper():
        return {"valid": True}
    return _deny("note must be uppercase")


async def uppercase_note(params: InvokeParams) -> dict[str, Any]:
    note = _note(params.payload)
    if not isinstance(note, str):
        return {"modified": False, "payload": params.payload}
    payload = dict(params.payload)
    payload["arguments"] = {**payload["arguments"], "note": note.upper()}
    return {"modified": True, "payload": payload}


async def crash(params: InvokeParams) -> dict[str, Any]:
    raise RuntimeError("conformance crash behavior")


BEHAVIORS: dict[str, Handler] = {
    "allow-all": allow_all,
    "deny-all": deny_all,
    "require-note": require_note,
    "require-uppercase-note": require_uppercase_note,
    "uppercase-note": uppercase_note,
    "crash": crash,
}


def _bind(spec: dict[str, Any]) -> Scripted:
    behavior = spec["behavior"]
    if behavior not in BEHAVIORS:
        raise KeyError(f"no binding for conformance behavior `{behavior}`")
    phases = ["request", "response"] if spec["phases"] == "both" else [spec["phases"]]
    declared: dict[str, Any] = {"events": spec["events"], "phases": phases}
    for key in ("mode", "failOpen"):
        if key in spec:
            declared[key] = spec[key]
    build = validator if spec["type"] == "validation" else mutator
    return build(spec["name"], BEHAVIORS[behavior], **declared)


def bind_interceptors(specs: list[dict[str, Any]]) -> InterceptorProvider:
    """A fresh provider serving the fixture's interceptors, in registration order."""
    return ScriptedProvider("conformance", *(_bind(spec) for spec in specs))

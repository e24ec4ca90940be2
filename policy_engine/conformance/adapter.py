"""policyc's reference adapter: the suite's named behaviours bound to real interceptors.

The runner hands every server the fixture's ``interceptors`` array (see
``contract``); this module turns it into one provider for ``policyc serve``'s
machinery, registered in the fixture's order under the fixture's names:

- the rule behaviours (``allow-all``, ``deny-all``, ``require-note``,
  ``require-uppercase-note``, ``uppercase-note``) are ``.policy`` templates in
  ``behaviors/``, compiled by the language like any policy, so the list
  results test the language's own descriptors;
- ``crash`` is a Python handler that raises inside the invoke, so the chain
  sees the server's real execution-failure error;
- ``secretless-redactor`` is the shipped secrets pack's redactor
  (``policies/secrets.policy``), served under the fixture's name and hooks;
- ``cross-boundary-guard`` is a `.policy` template too: one `deny flow` rule
  over the secrets patterns, with the suite's tool-to-server map.

An SDK's adapter mirrors this: read the array, register one interceptor per
entry with its behaviour, serve.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from policy_engine.compiler import CompileError, PolicySet, compile_policies, compile_sources
from policy_engine.language.shipped import shipped_policies_dir as shipped_dir
from policy_engine.wire import (
    InterceptorDescriptor,
    InterceptorProvider,
    InvokeParams,
    MutationResult,
    ValidationResult,
)

BEHAVIORS_DIR = Path(__file__).resolve().parent / "behaviors"
RULE_BEHAVIORS = (
    "allow-all",
    "deny-all",
    "require-note",
    "require-uppercase-note",
    "uppercase-note",
    "cross-boundary-guard",
)
# The shipped pack and the interceptor in it that the suite's redactor stands for.
SECRETS_PACK = "secrets.policy"
SECRETS_INTERCEPTOR = "secret-redactor"

Result = ValidationResult | MutationResult


class AdapterError(Exception):
    """The interceptors array cannot be bound: malformed, or a binding failed to compile."""


class Unsupported(Exception):
    """A behaviour this implementation has no binding for; the message says why."""


def read_interceptors(path: Path) -> list[dict[str, Any]]:
    """The runner's interceptors file: a JSON array of fixture interceptor objects."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise AdapterError(f"cannot read interceptors file `{path}`: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise AdapterError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from None
    if not isinstance(data, list) or not all(isinstance(e, dict) for e in data):
        raise AdapterError(f"{path}: expected a JSON array of interceptor objects")
    return data


def bind(interceptors: Sequence[dict[str, Any]]) -> InterceptorProvider:
    """One provider serving every entry, in order; raises ``Unsupported`` or ``AdapterError``."""
    for entry in interceptors:
        _check_entry(entry)
    behaviors = [entry["behavior"] for entry in interceptors]
    unknown = sorted(
        set(behaviors) - {*RULE_BEHAVIORS, "crash", "secretless-redactor"}, key=behaviors.index
    )
    if unknown:
        raise Unsupported(f"no binding for behaviour `{unknown[0]}`")
    rules = _compile_rules([e for e in interceptors if e["behavior"] in RULE_BEHAVIORS])
    pack = _secrets_pack() if "secretless-redactor" in behaviors else None
    bound: list[Bound] = []
    for entry in interceptors:
        name = entry["name"]
        if entry["behavior"] in RULE_BEHAVIORS:
            bound.append(Bound(_descriptor_of(rules, name), rules, name))
        elif entry["behavior"] == "crash":
            bound.append(Bound(declared_descriptor(entry), Crash(), name))
        else:
            assert pack is not None
            bound.append(Bound(declared_descriptor(entry), pack, SECRETS_INTERCEPTOR))
    return BoundProvider(bound)


def declared_descriptor(entry: dict[str, Any]) -> InterceptorDescriptor:
    """The descriptor a fixture entry declares: ``phases: both`` is two hooks, request first."""
    phases = ["request", "response"] if entry["phases"] == "both" else [entry["phases"]]
    raw: dict[str, Any] = {
        "name": entry["name"],
        "type": entry["type"],
        "hooks": [{"events": entry["events"], "phase": phase} for phase in phases],
    }
    for key in ("mode", "failOpen"):
        if key in entry:
            raw[key] = entry[key]
    return InterceptorDescriptor.model_validate(raw)


def behavior_policy(entry: dict[str, Any]) -> str:
    """The policy text of one rule behaviour, under the entry's name, hooks and settings."""
    template = (BEHAVIORS_DIR / f"{entry['behavior']}.policy").read_text(encoding="utf-8")
    settings = []
    if entry.get("mode") in ("audit", "enforce", "active"):
        settings.append(f"mode {entry['mode']}")
    if entry.get("failOpen") is True:
        settings.append("fail open")
    return (
        template.replace("@NAME@", entry["name"])
        .replace("@HOOKS@", f"on {', '.join(entry['events'])} {entry['phases']}")
        .replace("@SETTINGS@", "\n  ".join(settings))
    )


@dataclass(frozen=True)
class Bound:
    """One registered interceptor: what is listed, who runs it, under which name there."""

    descriptor: InterceptorDescriptor
    provider: InterceptorProvider
    target: str


class BoundProvider:
    """Serves bound interceptors under the fixture's names, in the fixture's order."""

    def __init__(self, bound: Sequence[Bound]) -> None:
        self._bound = {b.descriptor.name: b for b in bound}

    def descriptors(self) -> list[InterceptorDescriptor]:
        return [b.descriptor for b in self._bound.values()]

    async def invoke(self, params: InvokeParams) -> Result:
        bound = self._bound[params.name]
        if bound.target == params.name:
            return await bound.provider.invoke(params)
        result = await bound.provider.invoke(params.model_copy(update={"name": bound.target}))
        return result.model_copy(update={"interceptor": params.name})


class Crash:
    """The ``crash`` behaviour: every invoke raises, as a buggy handler would."""

    def descriptors(self) -> list[InterceptorDescriptor]:
        return []

    async def invoke(self, params: InvokeParams) -> Result:
        raise RuntimeError("the conformance `crash` behaviour always raises")


def _check_entry(entry: dict[str, Any]) -> None:
    for key in ("name", "type", "behavior", "events", "phases"):
        if key not in entry:
            raise AdapterError(f"interceptor entry {entry.get('name', '?')!r} has no `{key}`")
    if entry["phases"] not in ("request", "response", "both"):
        raise AdapterError(f"interceptor `{entry['name']}` has phases `{entry['phases']}`")


def _compile_rules(entries: list[dict[str, Any]]) -> PolicySet:
    text = "\n".join(behavior_policy(entry) for entry in entries)
    try:
        return compile_sources({"conformance-behaviors.policy": text})
    except CompileError as exc:
        raise AdapterError(f"behaviour policies do not compile:\n{exc.diagnostics_text}") from None


def _descriptor_of(policies: PolicySet, name: str) -> InterceptorDescriptor:
    for descriptor in policies.descriptors():
        if descriptor.name == name:
            return descriptor
    raise AdapterError(f"the behaviour policies define no interceptor `{name}`")


def shipped_policies_dir() -> Path:
    """The shipped ``policies/`` folder, or the adapter's error naming where it looked."""
    try:
        return shipped_dir()
    except FileNotFoundError as exc:
        raise AdapterError(str(exc)) from None


def _secrets_pack() -> PolicySet:
    path = shipped_policies_dir() / SECRETS_PACK
    try:
        pack = compile_policies([path])
    except CompileError as exc:
        raise AdapterError(f"{path} does not compile:\n{exc.diagnostics_text}") from None
    if SECRETS_INTERCEPTOR not in {d.name for d in pack.descriptors()}:
        raise AdapterError(f"{path} has no interceptor `{SECRETS_INTERCEPTOR}`")
    return pack

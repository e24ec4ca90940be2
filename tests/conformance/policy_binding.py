"""Binds the conformance suite's named behaviours to small .policy files.

Each fixture interceptor `{name, type, behavior, events, phases, mode?,
failOpen?}` becomes one block of policy text from `behaviors/<behavior>.policy`,
so the conformance runs exercise the real language, compiler and server.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from policy_engine.compiler import PolicySet, compile_sources

BEHAVIORS = Path(__file__).resolve().parent / "behaviors"


def behavior_text(entry: dict[str, Any]) -> str:
    template = (BEHAVIORS / f"{entry['behavior']}.policy").read_text(encoding="utf-8")
    hooks = f"on {', '.join(entry['events'])} {entry['phases']}"
    settings = []
    if entry.get("mode") in ("audit", "enforce", "active"):
        settings.append(f"mode {entry['mode']}")
    if entry.get("failOpen") is True:
        settings.append("fail open")
    return (
        template.replace("@NAME@", entry["name"])
        .replace("@HOOKS@", hooks)
        .replace("@SETTINGS@", "\n  ".join(settings))
    )


def fixture_policy(interceptors: list[dict[str, Any]]) -> str:
    """One policy file with the fixture's interceptors in registration order."""
    return "\n".join(behavior_text(entry) for entry in interceptors)


def fixture_policy_set(interceptors: list[dict[str, Any]]) -> PolicySet:
    return compile_sources({"fixture.policy": fixture_policy(interceptors)})


def supported(interceptors: list[dict[str, Any]]) -> bool:
    return all((BEHAVIORS / f"{e['behavior']}.policy").exists() for e in interceptors)

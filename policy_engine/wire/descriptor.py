"""The interceptor descriptor that ``interceptors/list`` returns."""

from __future__ import annotations

from typing import Any

from pydantic import Field, SerializerFunctionWrapHandler, field_validator, model_serializer

from ._base import InterceptorType, Phase, WireModel
from .constants import MODE_ALIASES, Mode
from .events import any_event_matches
from .priority import PriorityHint


def normalize_mode(value: object) -> object:
    """Accept ``enforce``, the older spelling some peers still send, as ``active``."""
    return MODE_ALIASES.get(value, value) if isinstance(value, str) else value


class Hook(WireModel):
    """One set of events at one phase."""

    events: list[str] = Field(min_length=1)
    phase: Phase


class Compat(WireModel):
    min_protocol: str
    max_protocol: str | None = None


class InterceptorDescriptor(WireModel):
    """What an interceptor declares about itself: capability plus policy defaults.

    Dumped for the wire, fields equal to their default (mode ``active``,
    failOpen ``false``) are left out, as the conformance fixtures expect.
    """

    name: str = Field(min_length=1)
    version: str | None = None
    description: str | None = None
    type: InterceptorType
    hooks: list[Hook]
    mode: Mode = "active"
    fail_open: bool = False
    priority_hint: PriorityHint | None = None
    compat: Compat | None = None
    config_schema: dict[str, Any] | None = None

    _normalize_mode = field_validator("mode", mode="before")(normalize_mode)

    @model_serializer(mode="wrap")
    def _drop_defaults(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for key in ("mode",):
            if data.get(key) == "active":
                del data[key]
        for key in ("failOpen", "fail_open"):
            if data.get(key) is False:
                del data[key]
        return data

    def hooks_event(self, event: str, phase: Phase | None = None) -> bool:
        """True when some hook of this interceptor fires for ``event`` (at ``phase``)."""
        return any(
            (phase is None or hook.phase == phase) and any_event_matches(hook.events, event)
            for hook in self.hooks
        )

    def hooked_events(self) -> list[str]:
        """Every event named in the hooks, first occurrence first."""
        seen: dict[str, None] = {}
        for hook in self.hooks:
            for event in hook.events:
                seen.setdefault(event, None)
        return list(seen)

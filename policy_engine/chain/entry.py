"""Chain entries: an interceptor, the host that serves it, and the invoker's policy.

The SEP separates what a server declares (capability and defaults) from what
the invoker decides (overrides). An entry keeps both and answers every policy
question with the override first, so the executor never merges anything itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from policy_engine.wire import (
    Hook,
    HookIndex,
    InterceptorDescriptor,
    InterceptorOverrides,
    InterceptorProvider,
    InterceptorType,
    Mode,
    Phase,
    event_matches,
    resolve_priority,
)
from policy_engine.wire.provider import FieldsInvoker, traits_of

from .errors import ChainConfigError


@dataclass(frozen=True, eq=False)
class Host:
    """One place interceptors run: a local policy set or a remote server.

    ``id`` qualifies interceptor names, so two hosts may serve the same name.
    """

    id: str
    provider: InterceptorProvider


@dataclass(frozen=True)
class Route:
    """How the chain calls a host's provider: its `ProviderTraits`, read once."""

    provider: InterceptorProvider
    # A private deep copy of the payload for each invoke, unless it promises
    # to leave the payload alone.
    copies_payload: bool
    # `invoke` on the params' fields and the run's state, when it offers that.
    fields: FieldsInvoker | None
    # A cancel scope of the chain's own around each invoke with a timeout.
    scoped: bool
    in_process: bool

    @classmethod
    def of(cls, provider: InterceptorProvider) -> Route:
        traits = traits_of(provider)
        return cls(
            provider,
            copies_payload=not traits.never_modifies_payload,
            fields=traits.invoke_fields,
            scoped=not traits.honours_timeout_ms,
            in_process=traits.evaluates_in_process,
        )


@dataclass(frozen=True, eq=False)
class ChainEntry:
    """The SEP's ChainEntry: descriptor + host + overrides, plus static config."""

    interceptor: InterceptorDescriptor
    host: Host
    overrides: InterceptorOverrides = field(default_factory=InterceptorOverrides)
    config: dict[str, Any] | None = None
    _index: HookIndex = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.overrides is None:  # accepted for convenience: no overrides
            object.__setattr__(self, "overrides", InterceptorOverrides())
        if self.overrides.hooks is not None:
            check_narrowing(self.interceptor, self.overrides.hooks, self.host.id)
        object.__setattr__(self, "_index", HookIndex((h.events, h.phase) for h in self.hooks))

    # Read once: an entry and what it holds are immutable, and a chain run
    # asks these of every entry several times.

    @cached_property
    def name(self) -> str:
        return self.interceptor.name

    @cached_property
    def type(self) -> InterceptorType:
        return self.interceptor.type

    @cached_property
    def mode(self) -> Mode:
        return self.overrides.mode or self.interceptor.mode

    @cached_property
    def route(self) -> Route:
        return Route.of(self.host.provider)

    @cached_property
    def fail_open(self) -> bool:
        if self.overrides.fail_open is not None:
            return self.overrides.fail_open
        return self.interceptor.fail_open

    @property
    def hooks(self) -> list[Hook]:
        """The hooks in force: the narrowed override if any, else the declared ones."""
        return self.overrides.hooks if self.overrides.hooks is not None else self.interceptor.hooks

    def fires_on(self, event: str, phase: Phase) -> bool:
        return self._index.fires(event, phase)

    def priority(self, phase: Phase) -> int:
        return resolve_priority(self.interceptor.priority_hint, phase, self.overrides.priority_hint)

    def timeout_ms(self, chain_default: int | None) -> int | None:
        return self.overrides.timeout_ms or chain_default

    def invoke_config(self, per_call: dict[str, Any] | None) -> dict[str, Any] | None:
        """Static config from the chain set-up, with this call's config on top (shallow)."""
        if self.config is None and per_call is None:
            return None
        return {**(self.config or {}), **(per_call or {})}


def check_narrowing(descriptor: InterceptorDescriptor, hooks: list[Hook], host_id: str) -> None:
    """Reject override hooks that reach beyond what the interceptor declares.

    An override event is covered when a declared hook of the same phase would
    fire for it: the same name, ``*``, or a namespace wildcard containing it.
    A wildcard override is covered only by an equal or wider declared wildcard.
    """
    for hook in hooks:
        declared = [d for d in descriptor.hooks if d.phase == hook.phase]
        for event in hook.events:
            if not any(event_matches(d_event, event) for d in declared for d_event in d.events):
                raise ChainConfigError(
                    f"override for `{descriptor.name}` on `{host_id}` widens its hooks: "
                    f"event `{event}` at phase `{hook.phase}` is not declared",
                    help="override hooks may only narrow: list a subset of the declared events",
                )

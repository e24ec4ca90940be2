"""The one interface every interceptor host implements, local or remote.

A compiled policy set, a remote MCP interceptor server seen through a client,
and a test double all answer the same two questions, so the server and the
chain never care which one they talk to. What a provider promises beyond
them (`ProviderTraits`) lets the chain skip work it would otherwise do.
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from .constants import Phase
from .descriptor import InterceptorDescriptor
from .invoke import InvocationContext, InvokeParams, MutationResult, ValidationResult
from .run import RunState


class FieldsInvoker(Protocol):
    """`InterceptorProvider.invoke` on the fields of `InvokeParams`, within a chain run.

    ``run`` is the chain run's `RunState` (None outside a run): what the
    provider may remember between the run's invokes goes there, never on
    the provider itself.
    """

    def __call__(
        self,
        name: str,
        event: str,
        phase: Phase,
        payload: Any,
        config: dict[str, Any] | None,
        timeout_ms: int | None,
        context: InvocationContext | None,
        run: RunState | None,
    ) -> Awaitable[ValidationResult | MutationResult]: ...


@dataclass(frozen=True)
class ProviderTraits:
    """What a provider promises the chain, each promise letting it skip some work.

    A provider exposes them as one attribute, ``traits``; a provider
    without one gets `UNKNOWN_TRAITS`, which promises nothing.
    """

    # The chain hands it the payload itself instead of a private deep copy
    # (which costs about as much as the evaluation on large payloads).
    never_modifies_payload: bool = False
    # It computes its answers in this process, without I/O: the chain runs its
    # validators one after another instead of one task each (spawning a task
    # costs more than a small evaluation, and CPU-bound work gains nothing
    # from overlapping on one event loop). A remote server never promises it.
    evaluates_in_process: bool = False
    # It answers the SEP's timeout error itself when an invoke outlives its
    # ``timeoutMs``: the chain awaits it without a cancel scope of its own
    # (entering and leaving one costs more than a small evaluation).
    honours_timeout_ms: bool = False
    # `invoke` on the params' fields, for a caller whose fields are already
    # valid (building `InvokeParams` costs a few microseconds an invoke), and
    # the way the chain hands a provider its run's `RunState`.
    invoke_fields: FieldsInvoker | None = None


UNKNOWN_TRAITS = ProviderTraits()


def traits_of(provider: object) -> ProviderTraits:
    """The provider's declared `ProviderTraits`, or `UNKNOWN_TRAITS` when it declares none."""
    traits = getattr(provider, "traits", None)
    return traits if isinstance(traits, ProviderTraits) else UNKNOWN_TRAITS


@runtime_checkable
class InterceptorProvider(Protocol):
    def descriptors(self) -> list[InterceptorDescriptor]:
        """Every interceptor this host serves, in registration order."""
        ...

    async def invoke(self, params: InvokeParams) -> ValidationResult | MutationResult:
        """Run one interceptor. Failures raise ``InterceptorError`` with the SEP's codes."""
        ...

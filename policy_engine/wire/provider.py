"""The one interface every interceptor host implements, local or remote.

A compiled policy set, a remote MCP interceptor server seen through a client,
and a test double all answer the same two questions, so the server and the
chain never care which one they talk to.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, Protocol, runtime_checkable

from .constants import Phase
from .descriptor import InterceptorDescriptor
from .invoke import InvocationContext, InvokeParams, MutationResult, ValidationResult


def leaves_payload_alone(provider: object) -> bool:
    """Whether a provider promises never to modify the payload it is given.

    A provider may set ``never_modifies_payload = True``; the chain then hands
    it the payload itself instead of a private deep copy (which costs about as
    much as the evaluation on large payloads). A compiled policy set and a
    remote server make that promise; an unknown provider gets a copy.
    """
    return getattr(provider, "never_modifies_payload", False) is True


def evaluates_in_process(provider: object) -> bool:
    """Whether a provider computes its answers in this process, without I/O.

    A provider may set ``evaluates_in_process = True``; the chain then runs
    its validators one after another instead of one task each: spawning a
    task costs more than a small evaluation, and CPU-bound work gains nothing
    from overlapping on one event loop. A remote server never sets it.
    """
    return getattr(provider, "evaluates_in_process", False) is True


def honours_timeout_ms(provider: object) -> bool:
    """Whether a provider answers the SEP's timeout error itself when an invoke
    outlives its ``timeoutMs``.

    A provider may set ``honours_timeout_ms = True``; the chain then awaits it
    without a cancel scope of its own (entering and leaving one costs more
    than a small evaluation). A compiled policy set checks its evaluation's
    duration and bounds each await; anything else is put under a scope.
    """
    return getattr(provider, "honours_timeout_ms", False) is True


class FieldsInvoker(Protocol):
    """`InterceptorProvider.invoke` on the fields of `InvokeParams`."""

    def __call__(
        self,
        name: str,
        event: str,
        phase: Phase,
        payload: Any,
        config: dict[str, Any] | None,
        timeout_ms: int | None,
        context: InvocationContext | None,
    ) -> Awaitable[ValidationResult | MutationResult]: ...


def fields_invoker(provider: object) -> FieldsInvoker | None:
    """A provider's ``invoke_fields``, when it offers one.

    The same call as ``invoke`` without the params model, for a caller whose
    fields are already valid (the chain's are): building `InvokeParams` costs
    a few microseconds, which an in-process evaluation notices.
    """
    invoker: FieldsInvoker | None = getattr(provider, "invoke_fields", None)
    return invoker


@runtime_checkable
class InterceptorProvider(Protocol):
    def descriptors(self) -> list[InterceptorDescriptor]:
        """Every interceptor this host serves, in registration order."""
        ...

    async def invoke(self, params: InvokeParams) -> ValidationResult | MutationResult:
        """Run one interceptor. Failures raise ``InterceptorError`` with the SEP's codes."""
        ...

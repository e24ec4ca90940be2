"""The one interface every interceptor host implements, local or remote.

A compiled policy set, a remote MCP interceptor server seen through a client,
and a test double all answer the same two questions, so the server and the
chain never care which one they talk to.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from .descriptor import InterceptorDescriptor
from .invoke import InvokeParams, MutationResult, ValidationResult


@runtime_checkable
class InterceptorProvider(Protocol):
    def descriptors(self) -> list[InterceptorDescriptor]:
        """Every interceptor this host serves, in registration order."""
        ...

    async def invoke(self, params: InvokeParams) -> ValidationResult | MutationResult:
        """Run one interceptor. Failures raise ``InterceptorError`` with the SEP's codes."""
        ...

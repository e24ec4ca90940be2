"""Session state answered synchronously, for `invoke_sync` (`policyc test`, the library).

Flow rules and rate limits keep state in a store; their `apply` is a coroutine
because a shared store (Redis) is reached over the network. The in-process
store never suspends, so a synchronous caller can drive the coroutine to its
end at once; a shared store cannot answer that way and is refused.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, TypeVar

from ..wire.errors import INTERNAL_ERROR, InterceptorError

_T = TypeVar("_T")


def needs_invoke(interceptor: str, what: str) -> InterceptorError:
    """The refusal of a synchronous call whose ``what`` keep state in a shared store."""
    reason = f"{what} on a shared store need `invoke`"
    return InterceptorError(
        INTERNAL_ERROR,
        "Interceptor execution failed",
        {"interceptor": interceptor, "reason": reason},
    )


def finish_now(coroutine: Coroutine[Any, Any, _T], store: str) -> _T:
    """The value of a coroutine that never suspends (an in-process ``store``), here."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        value: _T = done.value
        return value
    coroutine.close()
    raise RuntimeError(f"the {store} awaited")  # pragma: no cover - in-process stores never do

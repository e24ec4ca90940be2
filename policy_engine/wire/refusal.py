"""A refusal: why a message was not let through, in the one form every host answers with.

The gateway, the in-code client wrapper and the server middlewares each answer a
refused message on their own wire (a JSON-RPC error, a tool result, an exception
the SDK turns into an error). They used to build those forms themselves, and the
gateway told a policy's block from its own failure by reading the error message.
A :class:`Refusal` is built once, where the decision is made, and knows its wire
forms and whether a policy decided it (:attr:`Refusal.blocked_by_policy`), so no
host reads a message to find out.

Its data names what refused and why (interceptors, rules' messages, limits), never
the payload: the SEP's security section warns that error text can leak what a
mutator redacted.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from .errors import InterceptorError, chain_validation_failed

BLOCKED_META_KEY = "io.policyc/blocked"
"""``_meta`` key of an ``isError`` block result: the SEP error data, for programs."""

BLOCKED_TEXT_PREFIX = "Blocked by policy: "
"""How a block result's text starts: what a model reads instead of the tool's output."""


@dataclass(frozen=True)
class Refusal:
    """One refused message: its JSON-RPC error, and whether a policy refused it.

    ``blocked_by_policy`` is ``True`` when a policy decided (a validator's verdict,
    an element a filtered list hid) and ``False`` when the host could not decide
    (an interceptor that timed out or failed to mutate, a list the gateway could
    not fetch): a host that merges lists or passes a refusal on asks this flag,
    never the message.
    """

    code: int
    message: str
    data: dict[str, Any] | None = None
    blocked_by_policy: bool = True

    @classmethod
    def of(cls, error: InterceptorError, *, blocked_by_policy: bool) -> Refusal:
        """The refusal an error object stands for (a chain's, a host's own)."""
        return cls(error.code, error.message, error.data, blocked_by_policy)

    @classmethod
    def by_policy(cls, validation_errors: list[dict[str, Any]]) -> Refusal:
        """A policy's block: the SEP's ``Interceptor validation failed`` with these
        items (:func:`~policy_engine.wire.errors.validation_error_item`)."""
        return cls.of(chain_validation_failed(validation_errors), blocked_by_policy=True)

    def to_error_data(self) -> dict[str, Any] | None:
        """The JSON-RPC error's ``data`` (a copy: a host may add to what it sends)."""
        return copy.deepcopy(self.data) if self.data is not None else None

    def to_error(self) -> dict[str, Any]:
        """The JSON-RPC error object: ``code``, ``message`` and (when there is any) ``data``."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        data = self.to_error_data()
        if data is not None:
            error["data"] = data
        return error

    def to_exception(self) -> InterceptorError:
        """The same error as the exception the chain layers raise and catch."""
        return InterceptorError(self.code, self.message, self.to_error_data())

    def to_result(self) -> dict[str, Any]:
        """A ``tools/call`` result the model can read (``isError``), the error in ``_meta``
        under :data:`BLOCKED_META_KEY` for programs."""
        data = self.to_error_data() or {}
        reasons = [
            item["message"]
            for item in data.get("validationErrors", [])
            if isinstance(item, dict) and "message" in item
        ]
        text = "; ".join(reasons) or self.message
        return {
            "content": [{"type": "text", "text": f"{BLOCKED_TEXT_PREFIX}{text}"}],
            "isError": True,
            "_meta": {BLOCKED_META_KEY: {"code": self.code, "message": self.message, **data}},
        }

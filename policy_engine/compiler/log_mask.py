"""Masking the built-in secret and card patterns in a payload bound for a log.

A decision log with payloads holds what the policies let through; a policy
that redacts only a card number would leave an e-mail or a Stripe key in the
log in clear. Both hosts (`policyc serve`, `policyc gateway`) pass logged
payloads through `secret_masker()` first, which is the engine's own `redact`
over `LOG_MASKED`, so a mask is exactly what a policy's redaction would do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .bounds import Limits
from .policy_set import compile_sources

LOG_MASKED = (
    "PRIVATE_KEY",
    "AWS_ACCESS_KEY",
    "AWS_SECRET_KEY",
    "GITHUB_TOKEN",
    "SLACK_TOKEN",
    "STRIPE_KEY",
    "GOOGLE_API_KEY",
    "VENDOR_KEY",
    "JWT",
    "BEARER_TOKEN",
    "CONNECTION_STRING",
    "API_KEY",
    "CREDIT_CARD",
    "IBAN",
    "SSN",
    "EMAIL",
)
"""Built-in patterns masked in every logged payload, whatever the policies redacted."""

MAX_MASKED_BYTES = 64 * 1024
"""Largest payload masked (and so logged); a larger one is left out of the log."""

Masker = Callable[[Any], Any]


def secret_masker() -> Masker:
    """A function returning its payload with `LOG_MASKED` patterns replaced (the
    policy engine's own redactor, so a mask is exactly what `redact` does)."""
    source = (
        "mutator log-mask {\n  on * both\n  redact $ matching "
        + ", ".join(LOG_MASKED)
        + ' with "[MASKED:{pattern}]"\n}\n'
    )
    masks = compile_sources({"log-mask.policy": source}, Limits(max_bytes=MAX_MASKED_BYTES))

    def mask(payload: Any) -> Any:
        result = masks.invoke_sync("log-mask", "log", "request", payload)
        return (
            getattr(result, "payload", payload) if getattr(result, "modified", False) else payload
        )

    return mask


__all__ = ["LOG_MASKED", "MAX_MASKED_BYTES", "Masker", "secret_masker"]

"""Payloads redacted before a decision log writes them.

SEP-2624 asks implementations to log invocations "including payloads (with
PII redaction)", and organizations MUST keep PII out of their logs. A logged
payload is a mutator's output, and not every mutator redacts (one that masks
only a card number passes an e-mail and a Stripe key straight through), so
the log redacts on its own: every string, at any depth, against every
built-in secret and personal-data pattern (all of `language/builtin_patterns.py`
but `URL`), with the language's own redaction, marked `[MASKED:NAME]` so a
reader tells the log's masks from the policies' redactions. A payload that
cannot be redacted (past `MAX_LOGGED_BYTES`, beyond the evaluation bounds)
is not written at all: `NotLogged` says why.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from policy_engine.language.builtin_patterns import BUILTIN_PATTERNS
from policy_engine.wire import InterceptorError, MutationResult

from .bounds import Limits
from .policy_set import PolicySet, compile_sources

MAX_LOGGED_BYTES = 64 * 1024
"""Largest payload (JSON bytes) a log redacts and writes; a larger one is left out."""

_NAME = "log-redactor"
_KEPT = frozenset({"URL"})  # addresses are what logs are read for, not personal data
LOG_MASKED = tuple(name for name in BUILTIN_PATTERNS if name not in _KEPT)
"""The built-in patterns masked in every logged payload, whatever the policies redacted."""


class NotLogged(Exception):
    """A payload the log leaves out; ``str()`` is the reason written in its place."""


@cache
def _redactor() -> PolicySet:
    source = (
        f'mutator {_NAME} "Redacts what a decision log must not hold" {{\n'
        "  on * both\n"
        f'  redact $ matching {", ".join(LOG_MASKED)} with "[MASKED:{{pattern}}]"\n'
        "}\n"
    )
    return compile_sources({"log-redaction.policy": source}, Limits(max_bytes=MAX_LOGGED_BYTES))


def redact_for_log(payload: Any) -> Any:
    """``payload`` with every secret and personal-data match masked; `NotLogged` when it
    cannot be (too large, too deep), so nothing unredacted is ever written."""
    try:
        result = _redactor().invoke_sync(_NAME, "log/payload", "response", payload)
    except InterceptorError as exc:
        reason = "too large" if "larger than" in exc.message + str(exc.data) else "not redactable"
        raise NotLogged(reason) from None
    except (RecursionError, ValueError, TypeError):
        raise NotLogged("not redactable") from None
    if not isinstance(result, MutationResult):  # pragma: no cover - a mutator answers
        raise NotLogged("not redactable")
    return result.payload

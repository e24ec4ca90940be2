"""Payloads redacted before a decision log writes them.

SEP-2624 asks implementations to log invocations "including payloads (with
PII redaction)", and organizations MUST keep PII out of their logs. A logged
payload is a mutator's output, and not every mutator redacts (one that
upper-cases a note passes a token straight through), so the log redacts on
its own: every string, at any depth, against every built-in secret and
personal-data pattern (all of `language/builtin_patterns.py` but `URL`),
with the language's own redaction. A payload that cannot be redacted (beyond
the evaluation bounds, say) is not written at all.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from policy_engine.language.builtin_patterns import BUILTIN_PATTERNS
from policy_engine.wire import InterceptorError, MutationResult

from .policy_set import PolicySet, compile_sources

UNREDACTABLE = "[payload omitted: it could not be redacted]"
"""Written in place of a payload the redactor refused, so nothing unredacted is logged."""

_NAME = "log-redactor"
_KEPT = frozenset({"URL"})  # addresses are what logs are read for, not personal data


@cache
def _redactor() -> PolicySet:
    patterns = ", ".join(name for name in BUILTIN_PATTERNS if name not in _KEPT)
    source = (
        f'mutator {_NAME} "Redacts what a decision log must not hold" {{\n'
        "  on * both\n"
        f'  redact $ matching {patterns} with "[REDACTED:{{pattern}}]"\n'
        "}\n"
    )
    return compile_sources({"log-redaction.policy": source})


def redact_for_log(payload: Any) -> Any:
    """``payload`` with every secret and personal-data match replaced, or ``UNREDACTABLE``."""
    try:
        result = _redactor().invoke_sync(_NAME, "log/payload", "response", payload)
    except (InterceptorError, RecursionError, ValueError, TypeError):
        return UNREDACTABLE
    return result.payload if isinstance(result, MutationResult) else UNREDACTABLE

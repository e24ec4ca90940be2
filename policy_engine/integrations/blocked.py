"""The one exception an in-code host raises for a refusal, and the sentence it reads as.

A refusal travels as the SEP's error (``Interceptor validation failed``, its
``validationErrors``), which is right for the wire and useless in a
traceback. `PolicyBlocked` keeps that error for the wire (it is an
``MCPError``, so the SDK answers with its code, message and data unchanged)
and reads, as text, which interceptor and rule refused and why.
"""

from __future__ import annotations

from typing import Any

from mcp.shared.exceptions import MCPError

from policy_engine.wire import ChainExecutionResult, InterceptorError, PolicycError, Refusal


class PolicyBlocked(PolicycError, MCPError):
    """A call or its result refused by policy.

    ``refusal`` is what was refused and whether a policy decided it
    (:attr:`blocked_by_policy`); its error object (``code``, ``message``,
    ``data``) is what the peer sees. ``run`` is the failed chain run, if a
    chain ran (not for an element an earlier list hid). ``str()`` names the interceptor, the rule
    and its message: ``tools/call blocked by policy: integ-guard (rule
    integ-guard:4): shell commands are not allowed``.
    """

    def __init__(
        self,
        method: str,
        refusal: Refusal,
        run: ChainExecutionResult | None,
    ) -> None:
        super().__init__(refusal.code, refusal.message, refusal.to_error_data())
        self.method = method
        self.refusal = refusal
        self.run = run
        self.reason = blocked_reason(refusal.to_exception(), run)

    @property
    def blocked_by_policy(self) -> bool:
        """A policy refused (``False``: the chain could not decide, e.g. it timed out)."""
        return self.refusal.blocked_by_policy

    def __str__(self) -> str:
        return f"{self.method} blocked by policy: {self.reason}"


def blocked_reason(error: InterceptorError, run: ChainExecutionResult | None) -> str:
    """Which interceptor (and rule) refused and why, from the run when there is one."""
    reasons = _run_reasons(run) or _error_reasons(error.data or {})
    return "; ".join(reasons) if reasons else error.message


def _run_reasons(run: ChainExecutionResult | None) -> list[str]:
    """Each denying rule of an active validator, named by its code (`file:line` or
    `code`), or the interceptor that failed the run and why."""
    aborted = run.aborted_at if run is not None else None
    if run is None or aborted is None:
        return []
    reasons: list[str] = []
    if aborted.type == "validation":
        for entry in run.results:
            if entry.severity != "error" or entry.mode == "audit":
                continue
            if entry.error is not None:
                reasons.append(f"{entry.interceptor}: {entry.error}")
                continue
            rules = (entry.info or {}).get("rules") or []
            for index, message in enumerate(entry.messages or []):
                if message.severity != "error":
                    continue
                rule = rules[index].get("rule") if index < len(rules) else None
                named = f"{entry.interceptor} (rule {rule})" if rule else entry.interceptor
                reasons.append(f"{named}: {message.message}")
    return reasons or [f"{aborted.interceptor}: {aborted.reason}"]


def _error_reasons(data: dict[str, Any]) -> list[str]:
    """The same from the SEP error's data alone (a hidden element, a peer's error)."""
    items = data.get("validationErrors")
    if isinstance(items, list):
        return [
            f"{item.get('interceptor', '?')}: {item.get('message', 'validation failed')}"
            for item in items
            if isinstance(item, dict)
        ]
    failed = data.get("failedInterceptor") or data.get("interceptor")
    reason = data.get("reason")
    if isinstance(failed, str):
        return [f"{failed}: {reason}" if isinstance(reason, str) else failed]
    return []

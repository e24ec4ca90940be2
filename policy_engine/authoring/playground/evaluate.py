"""What one playground request runs: the check of `policyc check`, then the
in-process chain of `policyc eval --explain`, on text sent by the page."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
from pydantic import ValidationError

from ...chain import side_for
from ...compiler import Trace
from ...compiler.flows import FlowRuntime
from ...compiler.policy_set import CompileError, compile_model
from ...language.limits import SourceLimits
from ...language.pipeline import check_sources
from ...testing import TracingProvider, run_local_chain
from ...wire import ChainExecutionParams, ChainExecutionResult, InvocationContext

Explain = Callable[[ChainExecutionResult, dict[str, Trace], str], str]

PHASES = ("request", "response")
SAFETY_MARGIN_S = 10.0
"""The chain's own deadline bounds evaluation; this outer one only catches a chain that hangs."""
SIDES = ("sending", "receiving")


class CheckOverdue(TimeoutError):
    """Checking the sent policy set took longer than the playground's deadline."""


class BadRequest(ValueError):
    """The page sent something the API cannot take; the message names the field, not its value."""


@dataclass(frozen=True)
class RunRequest:
    sources: dict[str, str]
    event: str
    phase: str
    payload: Any
    evaluate: bool = True
    context: Any = None
    config: Any = None
    side: str | None = None

    @classmethod
    def from_json(cls, body: Any, *, max_files: int) -> RunRequest:
        if not isinstance(body, dict):
            raise BadRequest("the body must be a JSON object")
        sources = body.get("sources")
        if not isinstance(sources, dict) or not sources or len(sources) > max_files:
            raise BadRequest(f"`sources` must map 1 to {max_files} file names to policy text")
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in sources.items()):
            raise BadRequest("`sources` must map file names to policy text")
        event, phase, side = body.get("event"), body.get("phase"), body.get("side")
        if not isinstance(event, str) or not event:
            raise BadRequest("`event` must be a non-empty string")
        if phase not in PHASES:
            raise BadRequest("`phase` must be `request` or `response`")
        if side is not None and side not in SIDES:
            raise BadRequest("`side` must be `sending` or `receiving`")
        config = body.get("config")
        if config is not None and not isinstance(config, dict):
            raise BadRequest("`config` must be an object of per-interceptor objects")
        return cls(
            sources=dict(sources),
            event=event,
            phase=phase,
            payload=body.get("payload"),
            evaluate=body.get("evaluate", True) is not False,
            context=body.get("context"),
            config=config,
            side=side,
        )


async def run(
    request: RunRequest,
    explain: Explain | None,
    timeout_s: float,
    limits: SourceLimits,
    check_timeout_s: float,
) -> dict[str, Any]:
    """Diagnostics always; the chain's result, explain text and rule trace when the set is clean.

    The deadline covers checking too: past it the answer is ``CheckOverdue``
    at once, and the abandoned check thread ends on its own within the
    analyses' budget (``SourceLimits.max_analysis_steps``).
    """
    try:
        with anyio.fail_after(check_timeout_s):
            checked = await anyio.to_thread.run_sync(
                functools.partial(check_sources, request.sources, limits=limits),
                abandon_on_cancel=True,
            )
    except TimeoutError:
        raise CheckOverdue from None
    out: dict[str, Any] = {
        "diagnostics": [d.to_json() for d in checked.diagnostics],
        "errors": checked.error_count,
        "warnings": checked.warning_count,
        "evaluation": None,
    }
    if not checked.ok:
        out["skipped"] = "the policy set has errors"
        return out
    if not request.evaluate:
        out["skipped"] = "no payload to evaluate"
        return out
    try:
        # One synthetic session per run: a flow rule judges this message, not its lack of one.
        flows = FlowRuntime(synthetic_session="policyc-playground")
        policy_set = compile_model(checked, flows=flows)
        params = ChainExecutionParams(
            event=request.event,
            phase=request.phase,  # type: ignore[arg-type]
            payload=request.payload,
            config=request.config,
            context=InvocationContext.model_validate(request.context)
            if request.context is not None
            else None,
            timeout_ms=max(1, int(timeout_s * 1000)),
        )
    except CompileError:
        out["skipped"] = "the policy set has errors"
        return out
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise BadRequest(f"invalid {where or 'input'}: {first['msg']}") from None
    side = request.side or side_for("client", params.phase)
    provider = TracingProvider(policy_set)
    with anyio.fail_after(timeout_s + SAFETY_MARGIN_S):
        result = await run_local_chain(provider, params, side)  # type: ignore[arg-type]
    traces = dict(provider.traces)
    out["evaluation"] = {
        "status": result.status,
        "allowed": result.allowed,
        "side": side,
        "finalPayload": result.final_payload,
        "result": result.to_wire(),
        "explain": explain(result, traces, side) if explain is not None else None,
        "trace": _trace(result, traces),
        "note": flows.synthetic_note(),
    }
    return out


def _trace(result: ChainExecutionResult, traces: dict[str, Trace]) -> list[dict[str, Any]]:
    """Per interceptor, each rule that ran: where it is written and whether it fired."""
    out: list[dict[str, Any]] = []
    for entry in result.results:
        trace = traces.get(entry.interceptor)
        rules: list[dict[str, Any]] = []
        if trace is not None:
            fired = {event.rule.code for event in trace.events}
            for event in trace.events:
                span = event.rule.span
                rules.append(
                    {
                        "kind": event.rule.kind,
                        "code": event.rule.code,
                        "fired": True,
                        "path": event.path,
                        "message": event.message,
                        "severity": event.severity,
                        "file": span.file,
                        "line": span.line,
                        "column": span.column,
                    }
                )
            for ref in trace.evaluated:
                if ref.code not in fired:
                    rules.append(
                        {
                            "kind": ref.kind,
                            "code": ref.code,
                            "fired": False,
                            "file": ref.span.file,
                            "line": ref.span.line,
                            "column": ref.span.column,
                        }
                    )
        out.append(
            {
                "interceptor": entry.interceptor,
                "type": entry.type,
                "mode": entry.mode,
                "valid": entry.valid,
                "modified": entry.modified,
                "error": entry.error,
                "rules": rules,
                # Each rate limit's counter, limit and window (`eval --explain` prints the same).
                "counters": list(trace.counters) if trace is not None else [],
            }
        )
    return out

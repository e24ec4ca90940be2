"""The human trace behind `policyc eval --explain`.

Values a mutator removed or rewrote are shown masked (first and last
character and the length), never in full: the trace may end up in CI logs.
"""

from __future__ import annotations

import json
from typing import Any

from ..compiler import Trace
from ..wire import ChainExecutionResult


def masked(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if len(text) <= 2:
        return "*" * len(text)
    return f"{text[0]}{'*' * min(len(text) - 2, 12)}{text[-1]} ({len(text)} chars)"


def shown(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def render_explain(result: ChainExecutionResult, traces: dict[str, Trace], side: str) -> str:
    lines = [f"{result.event} {result.phase} ({side}): {result.status}"]
    for index, entry in enumerate(result.results, start=1):
        mode = " [audit]" if entry.mode == "audit" else ""
        if entry.type == "validation":
            outcome = "error" if entry.error else ("pass" if entry.valid else "fail")
        else:
            outcome = "error" if entry.error else ("modified" if entry.modified else "unchanged")
        lines.append(f"{index}. {entry.type} {entry.interceptor}{mode}: {outcome}")
        if entry.error:
            lines.append(f"     error: {entry.error}")
        trace = traces.get(entry.interceptor)
        if trace is None:
            continue
        fired = {event.rule.code for event in trace.events}
        for ref in trace.evaluated:
            if ref.code not in fired:
                lines.append(f"     - {ref.kind} {ref.code} ({ref.source}): no match")
        for event in trace.events:
            where = event.path or "$"
            if entry.type == "validation":
                lines.append(
                    f"     * {event.severity} at {where}: {event.message} ({event.rule.source})"
                )
            else:
                after = (
                    "removed"
                    if event.after is None and event.rule.kind == "remove"
                    else shown(event.after)
                )
                before = masked(event.before) if event.before is not None else "absent"
                lines.append(
                    f"     * {event.rule.kind} {where}: {before} -> {after} ({event.rule.source})"
                )
        lines.extend(f"     ~ {note}" for note in trace.counters)
    if result.aborted_at is not None:
        a = result.aborted_at
        lines.append(f"aborted at {a.interceptor} ({a.type}): {a.reason}")
    summary = result.validation_summary
    lines.append(
        f"summary: {summary.errors} error(s), {summary.warnings} warning(s), "
        f"{summary.infos} info, {result.total_duration_ms:.2f} ms"
    )
    return "\n".join(lines)

"""One JSON line per ``interceptor/invoke``, after OPA's decision logs.

The SEP asks implementations to log every invocation. Payloads stay out of
the log by default because they are exactly what policies protect; when asked
for, only a mutator's output is written, which is the payload *after* the
policy redacted it, never the input.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TextIO

Outcome = str
"""``valid``, ``invalid``, ``modified``, ``unmodified`` or ``error``."""


@dataclass(frozen=True, slots=True)
class Decision:
    interceptor: str | None
    event: str | None
    phase: str | None
    outcome: Outcome
    duration_ms: float
    trace_id: str | None = None
    session_id: str | None = None
    severity: str | None = None
    error_code: int | None = None
    payload: Any = None
    has_payload: bool = False


class DecisionLog:
    """Appends decisions to a text stream, one flushed line each.

    Writes are synchronous and never await, so lines from concurrent invokes
    on one event loop cannot interleave.
    """

    def __init__(
        self, stream: TextIO, *, include_payloads: bool = False, owned: bool = False
    ) -> None:
        self._stream = stream
        self.include_payloads = include_payloads
        self._owned = owned

    @classmethod
    def open(cls, target: str, include_payloads: bool = False) -> DecisionLog:
        """Open ``target`` for appending; ``-`` is stderr.

        Never stdout: under the stdio transport stdout is the JSON-RPC wire,
        and a log line there would corrupt it.
        """
        if target == "-":
            return cls(sys.stderr, include_payloads=include_payloads)
        stream = open(target, "a", encoding="utf-8")  # noqa: SIM115 - owned until close()
        return cls(stream, include_payloads=include_payloads, owned=True)

    def record(self, decision: Decision) -> None:
        entry: dict[str, Any] = {
            "time": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "interceptor": decision.interceptor,
            "event": decision.event,
            "phase": decision.phase,
            "outcome": decision.outcome,
            "durationMs": round(decision.duration_ms, 3),
            "traceId": decision.trace_id,
            "sessionId": decision.session_id,
        }
        if decision.severity is not None:
            entry["severity"] = decision.severity
        if decision.error_code is not None:
            entry["errorCode"] = decision.error_code
        if self.include_payloads and decision.has_payload:
            entry["payload"] = decision.payload
        try:
            line = json.dumps(entry, ensure_ascii=False, separators=(",", ":"), default=str)
        except (TypeError, ValueError, RecursionError):
            entry.pop("payload", None)
            entry["payloadOmitted"] = "not serializable"
            line = json.dumps(entry, ensure_ascii=False, separators=(",", ":"), default=str)
        self._stream.write(line + "\n")
        self._stream.flush()

    def close(self) -> None:
        if self._owned:
            self._stream.close()

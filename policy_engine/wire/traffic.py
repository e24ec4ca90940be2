"""The traffic record: one JSON line per chain run, written by `--record`, read by replay.

One home for the format, so the server, the gateway and `policyc replay` agree
on it. A record holds the payload exactly as it was received, which is the
data policies protect: files of records are written owner-only (see
``server/traffic_recorder.py``) and the docs call them sensitive.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

RECORD_VERSION = 1
PHASES = ("request", "response")
SIDES = ("sending", "receiving")


class TrafficFormatError(ValueError):
    """A line of a traffic file is not a record; ``line`` is 1-based."""

    def __init__(self, line: int, problem: str) -> None:
        self.line = line
        self.problem = problem
        super().__init__(f"line {line}: {problem}")


@dataclass(frozen=True)
class TrafficRecord:
    event: str
    phase: str
    payload: Any
    side: str | None = None
    context: dict[str, Any] | None = None
    decision: str | None = None
    """``allow`` or ``deny`` as recorded; replay re-evaluates a baseline when given one."""
    interceptor: str | None = None
    """Set when the record is one interceptor's invoke (a server) rather than a chain run."""
    backend: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"v": RECORD_VERSION, "event": self.event, "phase": self.phase}
        for key in ("side", "context", "decision", "interceptor", "backend"):
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        data["payload"] = self.payload
        return data


def record_line(record: TrafficRecord) -> str:
    """The record as one compact JSON line (no trailing newline)."""
    return json.dumps(record.to_json(), ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _reject_constant(name: str) -> float:
    raise ValueError(f"`{name}` is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError("number out of range")
    return value


def parse_record(text: str, line: int) -> TrafficRecord:
    """One line of a traffic file; raises TrafficFormatError naming the line and the field."""
    try:
        data = json.loads(text, parse_constant=_reject_constant, parse_float=_finite)
    except (ValueError, RecursionError) as exc:
        problem = str(exc) if isinstance(exc, ValueError) else "nested too deeply"
        raise TrafficFormatError(line, f"not JSON ({problem.split(':')[0]})") from None
    if not isinstance(data, dict):
        raise TrafficFormatError(line, "a record is a JSON object")
    event, phase = data.get("event"), data.get("phase")
    if not isinstance(event, str) or not event:
        raise TrafficFormatError(line, "`event` must be a non-empty string")
    if phase not in PHASES:
        raise TrafficFormatError(line, "`phase` must be `request` or `response`")
    if "payload" not in data:
        raise TrafficFormatError(line, "`payload` is missing")
    side = data.get("side")
    if side is not None and side not in SIDES:
        raise TrafficFormatError(line, "`side` must be `sending` or `receiving`")
    context = data.get("context")
    if context is not None and not isinstance(context, dict):
        raise TrafficFormatError(line, "`context` must be an object")
    decision = data.get("decision")
    if decision is not None and decision not in ("allow", "deny"):
        raise TrafficFormatError(line, "`decision` must be `allow` or `deny`")
    for key in ("interceptor", "backend"):
        if data.get(key) is not None and not isinstance(data[key], str):
            raise TrafficFormatError(line, f"`{key}` must be a string")
    return TrafficRecord(
        event=event,
        phase=phase,
        payload=data["payload"],
        side=side,
        context=context,
        decision=decision,
        interceptor=data.get("interceptor"),
        backend=data.get("backend"),
    )

"""One JSON line per chain run in the gateway: what ran, on what, for whom, and the verdict.

Payloads stay out unless asked for, and then only the payload the chain let
through (after redaction), never what the client or backend sent.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from policy_engine.interception import ChainRun
from policy_engine.server.decision_log import DecisionLog, fired_rules
from policy_engine.server.traffic_recorder import open_recorder
from policy_engine.wire.traffic import TrafficRecord, record_line


class GatewayDecisionLog:
    """Formats each chain run; the server's decision-log writer queues and writes it.

    One writer for both hosts: a bounded queue and a thread of its own, so a
    slow disk, a FIFO nobody reads or an undrained stderr never holds a message.
    """

    def __init__(self, writer: DecisionLog, *, include_payloads: bool = False) -> None:
        self._writer = writer
        self.include_payloads = include_payloads

    @classmethod
    def open(cls, target: str, *, include_payloads: bool = False) -> GatewayDecisionLog:
        """``-`` is stderr (never stdout, which is the wire in stdio mode)."""
        return cls(DecisionLog(target), include_payloads=include_payloads)

    def __call__(self, run: ChainRun) -> None:
        result = run.result
        record: dict[str, Any] = {
            "time": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "event": run.event,
            "phase": run.phase,
            "side": run.side,
            "origin": run.origin,
            "server": run.server,
            "sessionId": run.session_id,
            "decision": result.status,
            "interceptors": [
                {
                    "name": entry.interceptor,
                    "type": entry.type,
                    "durationMs": entry.duration_ms,
                    **({"valid": entry.valid} if entry.valid is not None else {}),
                    **({"modified": entry.modified} if entry.modified is not None else {}),
                    **({"error": entry.error} if entry.error is not None else {}),
                    **({"mode": entry.mode} if entry.mode is not None else {}),
                    **_rules(entry),
                }
                for entry in result.results
            ],
            "durationMs": result.total_duration_ms,
        }
        if result.aborted_at is not None:
            record["abortedAt"] = result.aborted_at.interceptor
        if self.include_payloads and result.status == "success":
            record["payload"] = result.final_payload
        self._writer.record_line(json.dumps(record, separators=(",", ":"), default=str))

    def close(self) -> None:
        self._writer.close()


def _rules(entry: Any) -> dict[str, Any]:
    """``rules``: which rules fired in this interceptor (codes and messages as written)."""
    fired = fired_rules(entry.info, entry.messages)
    return {"rules": fired} if fired else {}


class TrafficRecorder:
    """`--record`: each chain run's payload as received and its decision, for `policyc replay`."""

    def __init__(self, writer: DecisionLog) -> None:
        self._writer = writer

    @classmethod
    def open(cls, target: str) -> TrafficRecorder:
        return cls(open_recorder(target))

    def __call__(self, run: ChainRun) -> None:
        context = {
            key: value
            for key, value in (("sessionId", run.session_id), ("server", run.server))
            if value is not None
        }
        record = TrafficRecord(
            event=run.event,
            phase=run.phase,
            payload=run.payload,
            side=run.side,
            context=context or None,
            decision="allow" if run.result.status == "success" else "deny",
            backend=run.server,
        )
        try:
            self._writer.record_line(record_line(record))
        except (TypeError, ValueError, RecursionError):
            return  # a payload that is not JSON cannot be replayed; nothing to write

    def close(self) -> None:
        self._writer.close()


def observers(*chosen: Callable[[ChainRun], None] | None) -> Callable[[ChainRun], None] | None:
    """One observer that calls each of ``chosen`` that is set, in order."""
    active = [observer for observer in chosen if observer is not None]
    if not active:
        return None
    if len(active) == 1:
        return active[0]

    def each(run: ChainRun) -> None:
        for observer in active:
            observer(run)

    return each

"""One JSON line per chain run in the gateway: what ran, on what, for whom, and the verdict.

Payloads stay out unless asked for, and then only the payload the chain let
through (after redaction), never what the client or backend sent; every
built-in secret and personal-data pattern is masked in it again
(`compiler.log_redaction`), so a mutator that redacts less than everything
cannot put a key in the log.

A client must not be able to fill the log, nor push other decisions out of
its rotated files: every client-chosen string (the method name, the session
id) is cut to ``field_chars`` and the line lists what it cut (as
``policyc serve``'s log does); a payload larger than `MAX_LOGGED_PAYLOAD`
is left out, with its size; and each session gets a line budget
(`SessionBudget`): past it, its passed decisions are counted instead of
written and its refusals are written in a compact form. ``complete=True``
(`--decision-log-complete`) writes every line in full and fails the request
whose line cannot be queued instead.
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from policy_engine.compiler.log_redaction import MAX_LOGGED_BYTES, NotLogged, redact_for_log
from policy_engine.interception import ChainRun
from policy_engine.server.decision_log import DecisionLog, DecisionLogSettings, fired_rules
from policy_engine.server.traffic_recorder import open_recorder
from policy_engine.wire.traffic import TrafficRecord, record_line

MAX_LOGGED_PAYLOAD = MAX_LOGGED_BYTES
"""Bytes of compact JSON above which a passed payload is logged by its size alone."""


@dataclass
class SessionBudget:
    """Lines each session may write in full: ``burst`` at once, ``per_second`` after.

    A token bucket per session id, for the ``max_sessions`` ids seen last.
    Over budget, a session's lines are counted (``suppressed``) and the count
    is written with its next full line.
    """

    burst: int = 2000
    per_second: float = 50.0
    max_sessions: int = 10_000
    _buckets: OrderedDict[str, list[float]] = field(default_factory=OrderedDict)

    def take(self, session: str) -> bool:
        now = time.monotonic()
        bucket = self._buckets.get(session)
        if bucket is None:
            bucket = self._buckets[session] = [float(self.burst), now, 0.0]
            while len(self._buckets) > self.max_sessions:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(session)
        tokens = min(float(self.burst), bucket[0] + (now - bucket[1]) * self.per_second)
        bucket[1] = now
        if tokens >= 1:
            bucket[0] = tokens - 1
            return True
        bucket[0] = tokens
        bucket[2] += 1
        return False

    def suppressed(self, session: str) -> int:
        """Lines of ``session`` left out since its last full line (and reset the count)."""
        bucket = self._buckets.get(session)
        if bucket is None or not bucket[2]:
            return 0
        count, bucket[2] = int(bucket[2]), 0.0
        return count


class GatewayDecisionLog:
    """Formats each chain run; the server's decision-log writer queues and writes it.

    One writer for both hosts: a bounded queue and a thread of its own, so a
    slow disk, a FIFO nobody reads or an undrained stderr never holds a message.
    """

    def __init__(
        self,
        writer: DecisionLog,
        *,
        include_payloads: bool = False,
        budget: SessionBudget | None = None,
        redact: Callable[[Any], Any] = redact_for_log,
    ) -> None:
        self._writer = writer
        self.include_payloads = include_payloads
        self._field_chars = writer.settings.field_chars
        self._budget = None if writer.settings.complete else (budget or SessionBudget())
        self._redact = redact

    @classmethod
    def open(
        cls, target: str, *, include_payloads: bool = False, complete: bool = False
    ) -> GatewayDecisionLog:
        """``-`` is stderr (never stdout, which is the wire in stdio mode)."""
        writer = DecisionLog(target, DecisionLogSettings(complete=complete))
        return cls(writer, include_payloads=include_payloads)

    def __call__(self, run: ChainRun) -> None:
        session = run.session_id or ""
        if self._budget is not None and not self._budget.take(session):
            if run.result.status != "success":
                self._writer.record_line(self._compact(run))
            return
        record = self._record(run)
        if self._budget is not None and (left_out := self._budget.suppressed(session)):
            record["suppressedBefore"] = left_out
        self._writer.record_line(_dumps(record))

    def _record(self, run: ChainRun) -> dict[str, Any]:
        result = run.result
        truncated: list[str] = []
        cap = self._capper(truncated)
        record: dict[str, Any] = {
            "time": _now(),
            "event": cap("event", run.event),
            "phase": cap("phase", run.phase),
            "side": run.side,
            "origin": run.origin,
            "server": cap("server", run.server),
            "sessionId": cap("sessionId", run.session_id),
            "decision": result.status,
            "interceptors": [
                {
                    "name": cap("interceptors.name", entry.interceptor),
                    "type": entry.type,
                    "durationMs": entry.duration_ms,
                    **({"valid": entry.valid} if entry.valid is not None else {}),
                    **({"modified": entry.modified} if entry.modified is not None else {}),
                    **({"error": cap("interceptors.error", entry.error)} if entry.error else {}),
                    **({"mode": entry.mode} if entry.mode is not None else {}),
                    **_rules(entry),
                }
                for entry in result.results
            ],
            "durationMs": result.total_duration_ms,
        }
        if run.principal_id is not None:
            record["principal"] = cap("principal", run.principal_id)
        if run.trace_id is not None:
            record["traceId"] = run.trace_id  # parsed W3C hex, never the client's raw text
        if result.aborted_at is not None:
            record["abortedAt"] = cap("abortedAt", result.aborted_at.interceptor)
        if self.include_payloads and result.status == "success":
            record.update(self._payload(result.final_payload))
        if truncated:
            record["truncated"] = sorted(set(truncated))
        return record

    def _compact(self, run: ChainRun) -> str:
        """A refusal over the session's budget: what was refused, for whom, by whom."""
        cap = self._capper([])
        aborted = run.result.aborted_at
        record = {
            "time": _now(),
            "event": cap("event", run.event),
            "phase": run.phase,
            "sessionId": cap("sessionId", run.session_id),
            "decision": run.result.status,
            "abortedAt": cap("abortedAt", aborted.interceptor) if aborted else None,
            "compact": True,
        }
        if run.principal_id is not None:
            record["principal"] = cap("principal", run.principal_id)
        return _dumps(record)

    def _capper(self, truncated: list[str]) -> Callable[[str, str | None], str | None]:
        limit = self._field_chars

        def cap(name: str, value: str | None) -> str | None:
            if value is None or len(value) <= limit:
                return value
            truncated.append(name)
            return value[:limit]

        return cap

    def _payload(self, payload: Any) -> dict[str, Any]:
        """The payload, masked, or why it was left out (never a partial payload)."""
        try:
            size = len(json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode())
        except (TypeError, ValueError, RecursionError):
            return {"payloadOmitted": "not serializable"}
        if size > MAX_LOGGED_PAYLOAD:
            return {"payloadOmitted": "too large", "payloadBytes": size}
        try:
            return {"payload": self._redact(payload)}
        except NotLogged as exc:  # never write what could not be redacted
            return {"payloadOmitted": str(exc)}

    def close(self) -> None:
        self._writer.close()

    def reopen(self) -> None:
        """After an external rotation (SIGHUP): the next line goes to a new file."""
        self._writer.reopen()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _dumps(record: dict[str, Any]) -> str:
    """ASCII JSON: every control character, newline and escape byte is a ``\\u`` escape."""
    return json.dumps(record, separators=(",", ":"), default=str)


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

    def reopen(self) -> None:
        self._writer.reopen()


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

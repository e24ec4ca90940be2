"""One JSON line per ``interceptor/invoke``, after OPA's decision logs.

The SEP asks implementations to log every invocation. Payloads stay out of
the log by default because they are exactly what policies protect; when asked
for, only a mutator's output is written, which is the payload *after* the
policy redacted it, never the input.

Logging must never slow or stop enforcement, and a client must not be able
to grow the log at will:

- every client-supplied field (traceId, sessionId, names) is cut to
  ``field_chars`` characters, and the line lists the fields it cut; C1
  controls and line separators are escaped like the C0 ones, so no name can
  forge a line or drive a terminal;
- a logged payload passes ``redact_payload`` first (every built-in secret and
  personal-data pattern, see ``compiler.log_redaction``), and none is written
  without one;
- lines go through a bounded queue to a writer thread, so an invoke never
  waits for the disk, a FIFO nobody reads, or a stderr nobody drains. When
  the queue is full the line is dropped and counted; the count is written to
  the log as soon as it has room again (``{"dropped": N}``) and logged once
  as a warning. With ``complete=True`` a full queue fails the invoke instead
  (-32603), for operators who need every decision on record;
- a file is rotated by size (``max_bytes``, ``backups`` kept as ``.1``,
  ``.2``...), or reopened by ``reopen()`` (the CLI calls it on SIGHUP) for an
  external rotator such as logrotate;
- opening never blocks: a FIFO is opened by the writer thread, so a FIFO
  without a reader cannot hang start-up; a path that cannot be opened raises
  ``DecisionLogError`` with a message for the operator.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import queue
import stat
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TextIO

from policy_engine.observability import metrics
from policy_engine.wire import InterceptorError
from policy_engine.wire.errors import INTERNAL_ERROR

from .log_text import escape_json_line

logger = logging.getLogger(__name__)

Outcome = str
"""``valid``, ``invalid``, ``modified``, ``unmodified`` or ``error``."""

_STOP = object()
_BATCH_LINES = 1000
_CLOSE_TIMEOUT = 2.0


class DecisionLogError(Exception):
    """The log cannot be opened; the message names the path and the reason."""


@dataclass(frozen=True, slots=True)
class Decision:
    interceptor: str | None
    event: str | None
    phase: str | None
    outcome: Outcome
    duration_ms: float
    trace_id: str | None = None
    session_id: str | None = None
    principal_id: str | None = None
    """Who called (``context.principal.id``); never the token."""
    severity: str | None = None
    error_code: int | None = None
    payload: Any = None
    has_payload: bool = False
    rules: list[dict[str, str]] | None = None
    """Which rules fired (:func:`fired_rules`)."""


@dataclass(frozen=True)
class DecisionLogSettings:
    include_payloads: bool = False
    max_bytes: int | None = 100 * 1024 * 1024
    """Rotate a file once it reaches this size; ``None`` never rotates."""
    backups: int = 5
    queue_lines: int = 10_000
    complete: bool = False
    """Fail an invoke whose line cannot be queued, instead of dropping the line."""
    field_chars: int = 256
    file_mode: int = 0o644
    """Permissions of a file the log creates (a traffic record is owner-only: 0o600)."""
    redact_payload: Callable[[Any], Any] | None = field(default=None, compare=False)
    """Applied to a payload before it is written (the CLI passes
    `compiler.log_redaction.redact_for_log`); without one no payload is written (the
    SEP wants logged payloads redacted, and organizations no PII in logs), and a
    payload it raises on is left out of the line with the exception's text as reason."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _open_file(path: str, mode: int = 0o644) -> TextIO:
    """Open ``path`` for appending without ever blocking (a FIFO is refused here)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, mode)
    except IsADirectoryError:
        raise DecisionLogError(f"decision log `{path}` is a folder, not a file") from None
    except FileNotFoundError:
        raise DecisionLogError(f"decision log `{path}`: its folder does not exist") from None
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise DecisionLogError(f"cannot open decision log `{path}`: {reason}") from None
    os.set_blocking(fd, True)
    if mode & 0o077 == 0:
        os.fchmod(fd, mode)  # an existing file keeps no wider permissions either
    # backslashreplace writes a lone surrogate as its JSON escape, so the line stays JSON.
    return open(fd, "a", encoding="utf-8", errors="backslashreplace")


class _Sink:
    """Where the writer thread puts lines: stderr, a FIFO, or a rotating file."""

    def __init__(self, target: str, settings: DecisionLogSettings) -> None:
        self.target = target
        self._settings = settings
        self._stream: TextIO | None = None
        self._size = 0
        self.rotates = False
        if target == "-":
            self._stream = sys.stderr
            return
        try:
            is_fifo = stat.S_ISFIFO(os.stat(target).st_mode)
        except FileNotFoundError:
            is_fifo = False
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise DecisionLogError(f"cannot open decision log `{target}`: {reason}") from None
        if not is_fifo:
            self._stream = _open_file(target, settings.file_mode)  # errors surface at start-up
            self._size = self._stream.tell()
            self.rotates = settings.max_bytes is not None

    def _ensure_open(self) -> TextIO:
        if self._stream is None:
            # A FIFO: this blocks until a reader appears, in the writer thread only.
            self._stream = open(self.target, "a", encoding="utf-8", errors="backslashreplace")  # noqa: SIM115
        return self._stream

    def write(self, lines: list[str]) -> None:
        """Write whole lines; a file rotates before the line that would pass ``max_bytes``."""
        stream = self._ensure_open()
        limit = self._settings.max_bytes
        if not self.rotates or limit is None:
            stream.write("".join(lines))
            stream.flush()
            return
        chunk: list[str] = []
        for line in lines:
            size = len(line.encode("utf-8", "backslashreplace"))
            if self._size and self._size + size > limit:
                stream.write("".join(chunk))
                stream.flush()
                chunk = []
                self._rotate()
                stream = self._ensure_open()
            chunk.append(line)
            self._size += size
        stream.write("".join(chunk))
        stream.flush()

    def _rotate(self) -> None:
        self.close()
        backups = self._settings.backups
        for index in range(backups - 1, 0, -1):
            with contextlib.suppress(FileNotFoundError):
                os.replace(f"{self.target}.{index}", f"{self.target}.{index + 1}")
        if backups > 0:
            os.replace(self.target, f"{self.target}.1")
        else:
            os.truncate(self.target, 0)
        self._stream = _open_file(self.target, self._settings.file_mode)
        self._size = 0

    def reopen(self) -> None:
        if self.target == "-":
            return
        self.close()
        if self.rotates:
            self._stream = _open_file(self.target, self._settings.file_mode)
            self._size = self._stream.tell()

    def close(self) -> None:
        if self._stream is not None and self._stream is not sys.stderr:
            with contextlib.suppress(OSError):
                self._stream.close()
        self._stream = None if self.target != "-" else sys.stderr


_MAX_RULES = 32
_RULE_CHARS = 256


def fired_rules(info: Any, messages: Any) -> list[dict[str, str]]:
    """Which rules fired, from a validation result's ``info.rules``: code, source, the
    message as written, severity. Never the rendered message, whose placeholders may
    carry payload content; bounded in count and length whoever made the result."""
    rules = info.get("rules") if isinstance(info, dict) else None
    if not isinstance(rules, list):
        return []
    fired: list[dict[str, str]] = []
    for index, rule in enumerate(rules[:_MAX_RULES]):
        if not isinstance(rule, dict):
            continue
        item = {
            key: rule[key][:_RULE_CHARS]
            for key in ("rule", "source", "message")
            if isinstance(rule.get(key), str)
        }
        severity = (
            getattr(messages[index], "severity", None) if index < len(messages or []) else None
        )
        if isinstance(severity, str):
            item["severity"] = severity
        fired.append(item)
    return fired


class DecisionLog:
    """Formats decisions on the caller's thread and writes them from a thread of its own."""

    def __init__(self, target: str, settings: DecisionLogSettings | None = None) -> None:
        self.settings = settings or DecisionLogSettings()
        self.include_payloads = self.settings.include_payloads
        self._sink = _Sink(target, self.settings)
        self._queue: queue.Queue[object] = queue.Queue(self.settings.queue_lines)
        self._lock = threading.Lock()
        self._dropped = 0
        self._dropped_total = 0
        self._warned = False
        self._write_failed = False
        self._reopen = threading.Event()
        self._thread = threading.Thread(target=self._write_loop, name="decision-log", daemon=True)
        self._thread.start()

    @classmethod
    def open(cls, target: str, include_payloads: bool = False) -> DecisionLog:
        """A log on ``target`` (a path, or ``-`` for stderr) with default settings.

        Never stdout: under the stdio transport stdout is the JSON-RPC wire,
        and a log line there would corrupt it.
        """
        return cls(target, DecisionLogSettings(include_payloads=include_payloads))

    @property
    def dropped(self) -> int:
        """Lines dropped because the queue was full, since start-up."""
        return self._dropped_total

    def record(self, decision: Decision) -> None:
        """Queue one line; never blocks. Raises -32603 only in ``complete`` mode."""
        self.record_line(self._format(decision))

    def record_line(self, line: str) -> None:
        """Queue one line formatted elsewhere (a traffic record), with the same guarantees."""
        try:
            self._queue.put_nowait(escape_json_line(line))
        except queue.Full:
            with self._lock:
                self._dropped += 1
                self._dropped_total += 1
            metrics.decision_log_dropped()
            if self.settings.complete:
                raise InterceptorError(
                    INTERNAL_ERROR,
                    "Decision log unavailable",
                    {"reason": "the decision log is full and a complete log is required"},
                ) from None
            if not self._warned:
                self._warned = True
                logger.warning(
                    "decision log queue full (%d lines): dropping lines; the count is "
                    "written to the log when it drains",
                    self.settings.queue_lines,
                )

    def _format(self, decision: Decision) -> str:
        limit = self.settings.field_chars
        truncated: list[str] = []

        def capped(name: str, value: str | None) -> str | None:
            if value is None or len(value) <= limit:
                return value
            truncated.append(name)
            return value[:limit]

        entry: dict[str, Any] = {
            "time": _now(),
            "interceptor": capped("interceptor", decision.interceptor),
            "event": capped("event", decision.event),
            "phase": capped("phase", decision.phase),
            "outcome": decision.outcome,
            "durationMs": round(decision.duration_ms, 3),
            "traceId": capped("traceId", decision.trace_id),
            "sessionId": capped("sessionId", decision.session_id),
        }
        if decision.principal_id is not None:
            entry["principal"] = capped("principal", decision.principal_id)
        if truncated:
            entry["truncated"] = truncated
        if decision.severity is not None:
            entry["severity"] = decision.severity
        if decision.error_code is not None:
            entry["errorCode"] = decision.error_code
        if decision.rules:
            entry["rules"] = decision.rules
        if self.include_payloads and decision.has_payload:
            entry.update(self._logged_payload(decision.payload))
        try:
            line = json.dumps(entry, ensure_ascii=False, separators=(",", ":"), default=str)
        except (TypeError, ValueError, RecursionError):
            entry.pop("payload", None)
            entry["payloadOmitted"] = "not serializable"
            line = json.dumps(entry, ensure_ascii=False, separators=(",", ":"), default=str)
        return line

    def _logged_payload(self, payload: Any) -> dict[str, Any]:
        redact = self.settings.redact_payload
        if redact is None:
            return {"payloadOmitted": "no redactor configured"}
        try:
            return {"payload": redact(payload)}
        except Exception as exc:  # never write what could not be redacted
            return {"payloadOmitted": str(exc) or "could not be redacted"}

    def reopen(self) -> None:
        """Close and reopen the file before the next line (after an external rotation)."""
        self._reopen.set()

    def _write_loop(self) -> None:
        while True:
            first = self._queue.get()
            if first is _STOP:
                return
            lines = [first]
            while len(lines) < _BATCH_LINES:
                try:
                    lines.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            stop = _STOP in lines
            text = [f"{line}\n" for line in lines if line is not _STOP]
            with self._lock:
                dropped, self._dropped = self._dropped, 0
            if dropped:
                notice = {"time": _now(), "dropped": dropped}
                text.append(json.dumps(notice, separators=(",", ":")) + "\n")
            self._write(text)
            if stop:
                return

    def _write(self, text: list[str]) -> None:
        try:
            if self._reopen.is_set():
                self._reopen.clear()
                self._sink.reopen()
            self._sink.write(text)
        except (OSError, ValueError) as exc:
            count = len(text)
            with self._lock:
                self._dropped += count
                self._dropped_total += count
            metrics.decision_log_dropped(count)
            if not self._write_failed:
                self._write_failed = True
                logger.warning(
                    "decision log write failed (%s); lines are counted as dropped (logged once)",
                    exc,
                )
            self._sink.close()

    def close(self) -> None:
        """Flush what is queued, waiting at most a moment for a stuck writer."""
        with contextlib.suppress(queue.Full):
            self._queue.put(_STOP, timeout=_CLOSE_TIMEOUT)
        self._thread.join(_CLOSE_TIMEOUT)
        if not self._thread.is_alive():
            self._sink.close()
        if self._dropped_total:
            logger.warning("decision log: %d lines were dropped in all", self._dropped_total)


__all__ = ["Decision", "DecisionLog", "DecisionLogError", "DecisionLogSettings", "fired_rules"]

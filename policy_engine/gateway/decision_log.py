"""One JSON line per chain run in the gateway: what ran, on what, for whom, and the verdict.

Payloads stay out unless asked for, and then only the payload the chain let
through (after redaction), never what the client or backend sent.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from typing import Any, TextIO

from policy_engine.interception import ChainRun


class GatewayDecisionLog:
    """Synchronous, flushed line writes: concurrent runs on one loop cannot interleave."""

    def __init__(self, stream: TextIO, *, include_payloads: bool = False, owned: bool = False):
        self._stream = stream
        self.include_payloads = include_payloads
        self._owned = owned

    @classmethod
    def open(cls, target: str, *, include_payloads: bool = False) -> GatewayDecisionLog:
        """``-`` is stderr (never stdout, which is the wire in stdio mode)."""
        if target == "-":
            return cls(sys.stderr, include_payloads=include_payloads)
        stream = open(target, "a", encoding="utf-8")  # noqa: SIM115 - owned until close()
        return cls(stream, include_payloads=include_payloads, owned=True)

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
                }
                for entry in result.results
            ],
            "durationMs": result.total_duration_ms,
        }
        if result.aborted_at is not None:
            record["abortedAt"] = result.aborted_at.interceptor
        if self.include_payloads and result.status == "success":
            record["payload"] = result.final_payload
        try:
            self._stream.write(json.dumps(record, separators=(",", ":"), default=str) + "\n")
            self._stream.flush()
        except (OSError, ValueError):
            pass  # a closed or full log never takes the gateway down

    def close(self) -> None:
        if self._owned:
            self._stream.close()

"""What evaluation records about each rule, for results, `--explain` and coverage."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..language.diagnostics import Span


@dataclass(frozen=True)
class RuleRef:
    """A rule's identity: its code (declared or derived) and where it is written."""

    code: str
    span: Span
    kind: str
    # How results name the file (relative to the policy root unless asked otherwise).
    shown_file: str | None = None

    @cached_property
    def source(self) -> str:
        return f"{self.shown_file or self.span.file}:{self.span.line}"


@dataclass
class RuleEvent:
    """One rule that fired (validators) or changed the payload (mutators)."""

    rule: RuleRef
    path: str | None
    message: str | None = None
    severity: str | None = None
    before: Any = None
    after: Any = None
    count: int = 0


@dataclass
class Trace:
    """Collected only when asked for: which rules ran and what they did."""

    evaluated: list[RuleRef] = field(default_factory=list)
    events: list[RuleEvent] = field(default_factory=list)
    counters: list[str] = field(default_factory=list)
    """Each limit's counter, limit and window after the message (`eval --explain`)."""


def elapsed_ms(started: float) -> float:
    """Milliseconds since ``started`` (a `time.perf_counter()` reading), as results report it."""
    return round((time.perf_counter() - started) * 1000, 3)

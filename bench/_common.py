"""Timing, machine description and result files shared by the bench scripts.

Every figure a script prints is a median of many timed calls, and every
comparison is a ratio between contenders measured in the same run. The
contenders of one comparison are interleaved round by round, so a burst of
load from a neighbour on a shared machine lands on all of them rather than on
whichever happened to run at that moment.
"""

from __future__ import annotations

import copy
import datetime as _dt
import gc
import itertools
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).resolve().parent / "results"


@dataclass(frozen=True)
class Stats:
    """Summary of one contender's timed calls, in nanoseconds."""

    median_ns: float
    p25_ns: float
    p75_ns: float
    min_ns: float
    runs: int

    @property
    def spread(self) -> float:
        """Interquartile range relative to the median: a rough noise gauge."""
        return (self.p75_ns - self.p25_ns) / self.median_ns if self.median_ns else 0.0

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "spread": round(self.spread, 4)}


class FreshPayloads:
    """A rotating pool of deep copies, so every timed call gets another object.

    A server never sees the same payload object twice: each message is parsed
    afresh. Handing one object to every timed call lets any cache keyed on
    object identity skip work a server would do, so every invoke benchmark
    takes its payload from a pool, one pool per contender: interleaved
    contenders sharing a pool could hand one of them the same object every
    round. A cache holding fewer than ``size`` entries (policyc keeps one)
    cannot hide work from a contender that owns its pool; ``tests/bench``
    proves both.
    """

    def __init__(self, payload: Any, size: int) -> None:
        if size < 2:
            raise ValueError("a pool of one object is the same object every call")
        self.pool = [copy.deepcopy(payload) for _ in range(size)]
        self._next = itertools.cycle(self.pool).__next__

    def __call__(self) -> Any:
        return self._next()


def pool_size(payload_bytes: int) -> int:
    """Copies per pool: many for small payloads, fewer where memory would suffer."""
    return 64 if payload_bytes <= 64_000 else 16 if payload_bytes <= 200_000 else 4


def summarize(samples: Sequence[float]) -> Stats:
    ordered = sorted(samples)
    if len(ordered) >= 4:
        p25, _, p75 = statistics.quantiles(ordered, n=4, method="inclusive")
    else:
        p25, p75 = ordered[0], ordered[-1]
    return Stats(statistics.median(ordered), p25, p75, ordered[0], len(ordered))


def measure(
    cases: Mapping[str, Callable[[], object]],
    *,
    budget_s: float,
    rounds: int = 10,
    warmup: int = 3,
    max_runs: int = 5000,
    min_runs: int = 5,
) -> dict[str, Stats]:
    """Median time of each callable, the callables interleaved over ``rounds``.

    Each callable first runs ``warmup`` times untimed (caches, lazy imports,
    branch predictors); that also estimates its cost, which sets how many calls
    it gets per round so each spends about ``budget_s`` in total. Every call is
    timed on its own with ``perf_counter_ns``.
    """
    per_call: dict[str, float] = {}
    for name, run in cases.items():
        start = time.perf_counter_ns()
        for _ in range(warmup):
            run()
        per_call[name] = max((time.perf_counter_ns() - start) / max(warmup, 1), 1.0)
    per_round = {
        name: max(
            min_runs // rounds + 1,
            min(int(budget_s * 1e9 / rounds / cost), max_runs // rounds),
            1,
        )
        for name, cost in per_call.items()
    }
    samples: dict[str, list[int]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, run in cases.items():
            gc.collect()
            bucket = samples[name]
            for _ in range(per_round[name]):
                start = time.perf_counter_ns()
                run()
                bucket.append(time.perf_counter_ns() - start)
    return {name: summarize(bucket) for name, bucket in samples.items()}


def fmt_ns(ns: float) -> str:
    if ns >= 1e9:
        return f"{ns / 1e9:.2f} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    return f"{ns / 1e3:.1f} us"


def fmt_ratio(ratio: float) -> str:
    if ratio < 0.1:
        return f"{ratio:.2g}x"
    if ratio >= 100:
        return f"{ratio:,.0f}x"
    if ratio >= 10:
        return f"{ratio:.1f}x"
    return f"{ratio:.2f}x"


def print_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: int = 1) -> None:
    """A Markdown table; columns from index ``right`` on are right-aligned."""
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row, strict=True)]

    def line(cells: Sequence[str]) -> str:
        out = []
        for i, (cell, width) in enumerate(zip(cells, widths, strict=True)):
            out.append(cell.rjust(width) if i >= right else cell.ljust(width))
        return "| " + " | ".join(out) + " |"

    print(line(headers))
    print(
        "|"
        + "|".join(
            ("-" * (w + 1) + ":") if i >= right else ("-" * (w + 2)) for i, w in enumerate(widths)
        )
        + "|"
    )
    for row in rows:
        print(line(row))
    print()


def _cpu_model() -> str:
    try:
        for text_line in Path("/proc/cpuinfo").read_text().splitlines():
            if text_line.startswith("model name"):
                return text_line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine() -> dict[str, Any]:
    try:
        load = os.getloadavg()
    except OSError:
        load = (float("nan"),) * 3
    return {
        "cpu": _cpu_model(),
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "loadavg_at_start": [round(x, 2) for x in load],
    }


def print_machine(info: Mapping[str, Any]) -> None:
    print(
        f"machine: {info['cpu']}, {info['cpus']} CPUs, {info['implementation']} "
        f"{info['python']}, load average {info['loadavg_at_start']}"
    )
    print()


def write_results(name: str, payload: Mapping[str, Any], explicit: str | None = None) -> Path:
    """Write ``payload`` (plus a timestamp) as JSON under ``bench/results/``."""
    path = Path(explicit) if explicit else RESULTS_DIR / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"written": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"), **payload}
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return path

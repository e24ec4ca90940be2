"""Benchmark our compiled JSONPath evaluators against jsonpath-ng on MCP-shaped payloads.

Run: ``python bench/bench_jsonpath.py`` (optionally ``--quick``).  Prints, for a
~10 KB and a ~1 MB tool-call payload, the median time of ``find`` and ``update``
for three typical policy paths, ours and jsonpath-ng's, and the speed-up.

Not a test: timings depend on the machine.  jsonpath-ng's ``update`` works in
place, so each of its runs gets a fresh deep copy made outside the timed region.
That favours jsonpath-ng: ours is copy-on-write and leaves the input intact,
while a caller of jsonpath-ng that must keep the original message also pays for
the deep copy (its median is printed above the table).
"""

from __future__ import annotations

import argparse
import copy
import functools
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from jsonpath_ng.ext.parser import parse as jsonpath_ng_parse

from policy_engine.compiler.jsonpath import compile_path
from policy_engine.language.path_syntax import parse_path

PATHS = ("$..email", "$.content[*].text", "$.arguments.query")
REPLACEMENT = "[REDACTED]"


def _person(n: int) -> dict[str, Any]:
    return {
        "name": f"Person {n}",
        "email": f"person{n}@example.com",
        "roles": ["reader", "writer"] if n % 3 else ["admin"],
        "address": {"city": "Lyon", "zip": f"{69000 + n % 10}", "tags": [n, n + 1]},
    }


def _content_item(n: int) -> dict[str, Any]:
    text = (
        f"Result {n}: contact person{n}@example.com about ticket #{1000 + n}. "
        "The quarterly report is attached; see the summary below for details."
    )
    item: dict[str, Any] = {"type": "text", "text": text}
    if n % 4 == 0:
        item["annotations"] = {"audience": ["user"], "priority": 0.5, "email": "audit@example.com"}
    return item


def build_payload(target_bytes: int) -> dict[str, Any]:
    """A tool call with its result: nested arguments plus a list of content items."""
    payload: dict[str, Any] = {
        "name": "search_contacts",
        "arguments": {
            "query": "find everyone in Lyon",
            "options": {"limit": 50, "include": ["email", "roles"], "owner": _person(0)},
            "recipients": [],
        },
        "content": [],
        "isError": False,
    }
    n = 1
    while len(json.dumps(payload)) < target_bytes:
        payload["arguments"]["recipients"].append(_person(n))
        payload["content"].append(_content_item(n))
        n += 1
    return payload


def median_ns(run: Callable[[], object], budget_s: float, max_runs: int) -> float:
    """Median of timed runs: at least 5, more until the time budget or ``max_runs``."""
    times: list[int] = []
    deadline = time.perf_counter() + budget_s
    while len(times) < max_runs and (len(times) < 5 or time.perf_counter() < deadline):
        start = time.perf_counter_ns()
        run()
        times.append(time.perf_counter_ns() - start)
    return statistics.median(times)


def median_ns_with_setup(
    setup: Callable[[], Any], run: Callable[[Any], object], budget_s: float, max_runs: int
) -> float:
    """Like :func:`median_ns`, but ``setup()`` (untimed) makes each run's input."""
    times: list[int] = []
    deadline = time.perf_counter() + budget_s
    while len(times) < max_runs and (len(times) < 5 or time.perf_counter() < deadline):
        data = setup()
        start = time.perf_counter_ns()
        run(data)
        times.append(time.perf_counter_ns() - start)
    return statistics.median(times)


def _format_ns(ns: float) -> str:
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    return f"{ns / 1e3:.1f} us"


def bench_path(
    label: str, source: str, payload: dict[str, Any], budget_s: float, max_runs: int
) -> None:
    ours = compile_path(parse_path(source))
    theirs = jsonpath_ng_parse(source)
    # Same answers first: a fast wrong evaluator is worth nothing.
    assert ours.values(payload) == [match.value for match in theirs.find(payload)], source

    def our_find() -> object:
        return ours.find(payload)

    def their_find() -> object:
        return theirs.find(payload)

    def our_update() -> object:
        return ours.update(payload, lambda _value, _loc: REPLACEMENT)

    def fresh_copy() -> Any:
        return copy.deepcopy(payload)

    def their_update(data: Any) -> object:
        return theirs.update(data, REPLACEMENT)

    rows = (
        (
            "find",
            median_ns(our_find, budget_s, max_runs),
            median_ns(their_find, budget_s, max_runs),
        ),
        (
            "update",
            median_ns(our_update, budget_s, max_runs),
            median_ns_with_setup(fresh_copy, their_update, budget_s, max_runs),
        ),
    )
    for operation, our_ns, their_ns in rows:
        print(
            f"| {label:7} | {source:18} | {operation:6} | {_format_ns(our_ns):>10} "
            f"| {_format_ns(their_ns):>11} | {their_ns / our_ns:7.1f}x |"
        )


def main() -> None:
    options = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    options.add_argument("--quick", action="store_true", help="shorter time budget per cell")
    args = options.parse_args()
    budget = 0.2 if args.quick else 1.0
    payloads = (("10 KB", build_payload(10_000), 2000), ("1 MB", build_payload(1_000_000), 200))
    for label, payload, _ in payloads:
        copy_ns = median_ns(functools.partial(copy.deepcopy, payload), budget, 200)
        print(
            f"{label} payload: {len(json.dumps(payload)):,} bytes; "
            f"copy.deepcopy takes {_format_ns(copy_ns)} (jsonpath-ng updates in place)"
        )
    print()
    print("| payload | path               | op     |       ours | jsonpath-ng | speed-up |")
    print("|---------|--------------------|--------|-----------:|------------:|---------:|")
    for label, payload, max_runs in payloads:
        for source in PATHS:
            bench_path(label, source, payload, budget, max_runs)


if __name__ == "__main__":
    main()

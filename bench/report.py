"""Regenerate the tables and plots of docs/performance.md from bench JSON results.

    python bench/report.py --run serving         # run the serving benches, then rewrite
    python bench/report.py --run all             # every bench the page quotes (long)
    python bench/report.py                       # read bench/results/, publish, rewrite
    python bench/report.py --from docs/perf/results   # rebuild from the published runs

``--run`` is the one command that regenerates the page: it runs the benches
(``--runs`` times each, ``--quick`` for their short mode), each writing
``bench/results/NAME-N.json`` with the machine's load average at its start and
end, and then rewrites the page; the page states the load the figures were
taken under, so a run on a busy machine says so.

Each bench script writes ``bench/results/NAME.json``; run one several times
with ``--json bench/results/NAME-1.json`` (``-2``, ``-3``...) and this script
takes, for every figure, the middle value over the runs and their range. It
copies the runs it used to ``docs/perf/results/`` (so the page can always be
rebuilt from what it quotes), draws ``docs/perf/*.png`` with matplotlib (the
``bench`` extra) and replaces every block of docs/performance.md between
``<!-- bench:NAME -->`` and ``<!-- /bench:NAME -->`` with a fresh table.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _common import fmt_ns, fmt_ratio

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
PUBLISHED = ROOT / "docs" / "perf"
PAGE = ROOT / "docs" / "performance.md"

Runs = list[dict[str, Any]]
DASH = "-"


def load_runs(directory: Path, name: str) -> Runs:
    files = sorted(directory.glob(f"{name}-*.json")) or sorted(directory.glob(f"{name}.json"))
    return [json.loads(f.read_text(encoding="utf-8")) for f in files]


def dig(document: Any, path: Sequence[str]) -> Any:
    for key in path:
        if not isinstance(document, dict) or key not in document:
            return None
        document = document[key]
    return document


class Figure:
    """One figure over several runs: the middle value and the range."""

    def __init__(self, values: list[float]) -> None:
        self.values = sorted(values)

    @property
    def middle(self) -> float:
        return statistics.median(self.values) if self.values else float("nan")

    def time(self) -> str:
        return fmt_ns(self.middle) if self.values else DASH

    def time_range(self) -> str:
        if len(self.values) < 2:
            return DASH
        return f"{fmt_ns(self.values[0])} to {fmt_ns(self.values[-1])}"

    def ratio(self) -> str:
        return fmt_ratio(self.middle) if self.values else DASH

    def ratio_range(self) -> str:
        if len(self.values) < 2:
            return DASH
        return f"{fmt_ratio(self.values[0])} to {fmt_ratio(self.values[-1])}"


def figure(runs: Runs, *path: str) -> Figure:
    return Figure([v for run in runs if isinstance(v := dig(run, path), int | float)])


def ratio_figure(runs: Runs, top: Sequence[str], bottom: Sequence[str]) -> Figure:
    """A ratio taken within each run, then summarised over runs."""
    values = []
    for run in runs:
        a, b = dig(run, top), dig(run, bottom)
        if isinstance(a, int | float) and isinstance(b, int | float) and b:
            values.append(a / b)
    return Figure(values)


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: int = 1) -> str:
    align = ["---" if i < right else "--:" for i in range(len(headers))]
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


# --------------------------------------------------------------------------- tables


def shipped_table(hot: Runs) -> str:
    rows = []
    names = list(dig(hot[0], ["shipped", "interceptors"]) or {}) if hot else []
    for name in names:
        f = figure(hot, "shipped", "interceptors", name, "median_ns")
        rows.append([f"`{name}` (10 KB request)", f.time(), f.time_range()])
    for size in ("10 KB", "100 KB"):
        f = figure(hot, "shipped", "chain", size, "median_ns")
        rows.append([f"whole chain, {size} request", f.time(), f.time_range()])
    return table(["what", "median", "range over runs"], rows)


def throughput_table(hot: Runs) -> str:
    rows = []
    for engine in ("policyc", "hand-written RE2 loop"):
        t = figure(hot, "throughput", engine, "median_ns")
        mbps = figure(hot, "throughput", engine, "mb_per_s")
        ratio = figure(hot, "throughput", engine, "ratio_vs_hand")
        span = f"{mbps.values[0]:.1f} to {mbps.values[-1]:.1f}" if len(mbps.values) > 1 else DASH
        rows.append([engine, t.time(), f"{mbps.middle:.1f} MB/s", span, ratio.ratio()])
    return table(["engine", "median", "throughput", "range (MB/s)", "vs hand"], rows)


def values_table(hot: Runs) -> str:
    rows = []
    for engine in ("policyc", "hand-written RE2 loop"):
        t = figure(hot, "values", engine, "median_ns")
        ratio = figure(hot, "values", engine, "ratio_vs_hand")
        rows.append([engine, t.time(), t.time_range(), ratio.ratio()])
    return table(["engine", "median", "range over runs", "vs hand"], rows)


def redact_rules_table(hot: Runs) -> str:
    rows = []
    for n in ("10", "100", "1000"):
        for kind in ("rules", "rule, N patterns"):
            f = figure(hot, "redact_rules", n, kind, "median_ns")
            g = figure(hot, "redact_rules", n, kind, "growth_vs_10")
            label = f"{int(n):,} rules" if kind == "rules" else f"1 rule, {int(n):,} patterns"
            rows.append([label, f.time(), f.time_range(), g.ratio(), g.ratio_range()])
    return table(["policy", "median", "range", "vs 10", "range of vs 10"], rows)


def peer_table(inv: Runs) -> str:
    rows = []
    inv = [run for run in inv if "common" in run]
    for key in dig(inv[0], ["common"]) or {} if inv else {}:
        for engine in dig(inv[0], ["common", key]) or {}:
            t = figure(inv, "common", key, engine, "median_ns")
            r = figure(inv, "common", key, engine, "ratio_vs_policyc")
            rows.append([key, engine, t.time(), r.ratio(), r.ratio_range()])
    return table(["payload", "engine", "median", "vs policyc", "range of vs policyc"], rows, 2)


def pair_table(inv: Runs, section: str, ours: str, hand: str, ratio_key: str) -> str:
    rows = []
    for key in dig(inv[0], [section]) or {} if inv else {}:
        a = figure(inv, section, key, ours, "median_ns")
        b = figure(inv, section, key, hand, "median_ns")
        r = figure(inv, section, key, ratio_key)
        rows.append([key, a.time(), b.time(), r.ratio(), r.ratio_range()])
    return table(["payload", "policyc", "by hand", "policyc / hand", "range"], rows)


def bounds_table(inv: Runs) -> str:
    rows = []
    for key in dig(inv[0], ["bounds"]) or {} if inv else {}:
        f = figure(inv, "bounds", key, "median_ns")
        rows.append([key, f.time(), f.time_range()])
    return table(["payload", "`check_bounds` alone", "range"], rows)


def regex_table(inv: Runs) -> str:
    rows = []
    for field in dig(inv[0], ["regex"]) or {} if inv else {}:
        for n in dig(inv[0], ["regex", field]) or {}:
            cell = ("regex", field, n)
            rows.append(
                [
                    field,
                    f"{int(n):,}",
                    figure(inv, *cell, "policyc", "median_ns").time(),
                    figure(inv, *cell, "policyc, field absent", "median_ns").time(),
                    figure(inv, *cell, "loop of re2 regexes", "median_ns").time(),
                    figure(inv, *cell, "re2.Set", "median_ns").time(),
                ]
            )
    headers = ["field", "rules", "policyc", "policyc, field absent", "loop of re2", "`re2.Set`"]
    return table(headers, rows, 1)


def server_table(srv: Runs) -> str:
    rows = []
    for run in srv[:1]:
        for row in run.get("figures", []):
            rows.append(
                [
                    row.get("transport", ""),
                    row.get("impl", ""),
                    str(row.get("in_flight", 1)),
                    f"{row.get('median_ms', 0) * 1000:.0f} us",
                    f"{row.get('throughput', 0):,.0f}/s",
                ]
            )
    headers = ["transport", "server", "in flight (throughput)", "median round trip", "throughput"]
    return table(headers, rows, 2)


def _load(run: dict[str, Any]) -> str:
    start = dig(run, ["machine", "loadavg_at_start"]) or ["?"]
    end = run.get("loadavg_at_end") or ["?"]
    return f"{start[0]} -> {end[0]}"


def gateway_table(gw: Runs) -> str:
    """Per case: direct, pass-through and policies, the ratios, and the gateway's CPU."""
    rows = []
    for case in dig(gw[0], ["cases"]) or {} if gw else {}:
        cell = ("cases", case)
        direct = figure(gw, *cell, "direct")
        bare = figure(gw, *cell, "gateway")
        shipped = figure(gw, *cell, "gateway+policies")
        rows.append(
            [
                case,
                f"{direct.middle * 1000:.0f} us",
                f"{bare.middle * 1000:.0f} us",
                f"{shipped.middle * 1000:.0f} us",
                ratio_figure(gw, [*cell, "gateway"], [*cell, "direct"]).ratio(),
                ratio_figure(gw, [*cell, "gateway+policies"], [*cell, "gateway"]).ratio(),
                f"{figure(gw, *cell, 'gateway cpu us').middle:.0f} us",
                f"{figure(gw, *cell, 'gateway+policies cpu us').middle:.0f} us",
            ]
        )
    headers = [
        "case",
        "direct",
        "pass-through",
        "+ policies",
        "pass-through / direct",
        "policies / pass-through",
        "gateway CPU per call",
        "with policies",
    ]
    return table(headers, rows) + "\n\n" + _payload_note(gw)


def integration_table(integ: Runs) -> str:
    rows = []
    for size in dig(integ[0], ["cases"]) or {} if integ else {}:
        cell = ("cases", size)
        rows.append(
            [
                size,
                f"{figure(integ, *cell, 'plain').middle * 1000:.0f} us",
                f"{figure(integ, *cell, 'unhooked').middle * 1000:.0f} us",
                f"{figure(integ, *cell, 'policies').middle * 1000:.0f} us",
                figure(integ, *cell, "middleware_ratio").ratio(),
                figure(integ, *cell, "policies_ratio").ratio(),
            ]
        )
    headers = ["payload", "plain", "middleware, nothing hooked", "shipped policies"]
    headers += ["middleware / plain", "policies / plain"]
    mode = integ[0].get("mode", "legacy") if integ else "legacy"
    return table(headers, rows) + f"\n\nClient mode: {mode}. " + _payload_note(integ)


def floor_table(floor: Runs, gw: Runs, integ: Runs) -> str:
    """The RE2 calls alone (bench_floor.py) against what each serving target leaves the
    chain: half a pass-through call over stdio, 15% of one over HTTP (16 in flight),
    half a plain in-process call (bench_gateway.py, bench_integration.py)."""
    rows = []
    for size in dig(floor[0], ["sizes"]) or {} if floor else {}:
        cell = ("sizes", size)

        def median(runs: Runs, *path: str) -> Figure:
            return figure(runs, *path, "median_ns")

        def budget(runs: Runs, share: float, *path: str) -> str:
            taken = figure(runs, *path)
            return f"{taken.middle * 1000 * share:.0f} us" if taken.values else DASH

        rows.append(
            [
                size,
                f"{dig(floor[0], [*cell, 'calls', 'RE2 calls, one pass per pattern']) or 0:,}",
                median(floor, *cell, "RE2 calls, one pass per pattern").time(),
                median(floor, *cell, "RE2 calls, one alternation, no submatches").time(),
                median(floor, *cell, "whole shipped chain").time(),
                budget(gw, 0.5, "cases", f"stdio x16 {size}", "gateway"),
                budget(gw, 0.15, "cases", f"http x16 {size}", "gateway"),
                budget(integ, 0.5, "cases", size, "plain"),
            ]
        )
    headers = ["request", "Match calls", "RE2, one pass per pattern", "RE2 floor", "chain"]
    headers += ["left by stdio 1.5x", "left by HTTP 1.15x", "left in process 1.5x"]
    return table(headers, rows) + "\n\n" + _payload_note_floor(floor)


def _payload_note_floor(floor: Runs) -> str:
    if not floor:
        return ""
    load = "; ".join(_load(run) for run in floor)
    return f"{len(floor)} run(s) of bench_floor.py; load average over each: {load}."


def serving_table(srv: Runs) -> str:
    """Every server run, one row per transport: policyc over the no-op, with the load."""
    rows = []
    for run in srv:
        by_key = {(f["impl"], f["transport"]): f for f in run.get("figures", [])}
        size = str(run.get("payload", "")).split(" ")[0] or "?"
        for transport in dict.fromkeys(t for _, t in by_key):
            ours, base = by_key.get(("policyc", transport)), by_key.get(("noop", transport))
            if transport == "stdio-fast":
                base = by_key.get(("noop", "stdio-sdk"))
            if not (ours and base):
                continue
            rows.append(
                [
                    transport,
                    size,
                    f"{ours['median_ms'] / base['median_ms']:.2f}x",
                    f"{base['throughput'] / ours['throughput']:.2f}x",
                    f"{ours['cpu_us'] / base['cpu_us']:.2f}x",
                    f"{ours['cpu_us']:.0f} us",
                    _load(run),
                ]
            )
    headers = ["transport", "payload", "median round trip", "time per invoke (16)"]
    headers += ["CPU per invoke", "policyc CPU", "load average"]
    return table(headers, rows, 2)


def cold_check_table(cold: Runs) -> str:
    rows = []
    labels = {"pass": "`python -c pass`", "cold": "`policyc check`, no caches"}
    labels["warm"] = "`policyc check`, lark cache in TMPDIR"
    for name, label in labels.items():
        wall = figure(cold, "figures", name, "wall_s")
        cpu = figure(cold, "figures", name, "cpu_s")
        base = figure(cold, "figures", "pass", "wall_s")
        rows.append(
            [
                label,
                f"{wall.middle:.3f} s",
                f"{cpu.middle:.3f} s",
                f"{wall.middle / base.middle:.1f}x",
            ]
        )
    load = ", ".join(_load(run) for run in cold)
    return table(["100 files", "wall", "CPU", "wall / pass"], rows) + f"\n\nLoad average: {load}."


def _payload_note(runs: Runs) -> str:
    payloads = dig(runs[0], ["payloads"]) if runs else None
    loads = ", ".join(_load(run) for run in runs)
    text = "; ".join(f"{size}: {what}" for size, what in (payloads or {}).items())
    return f"Payloads: {text}. {len(runs)} run(s); load average over each: {loads}."


def compile_table(comp: Runs) -> str:
    rows = []
    for n in dig(comp[0], ["compile"]) or {} if comp else {}:
        cell = ("compile", n)
        total = figure(comp, *cell, "compile", "median_ns")
        rows.append(
            [
                f"{int(n):,}",
                str(dig(comp[0], [*cell, "files"])),
                total.time(),
                total.time_range(),
                figure(comp, *cell, "per_rule_ns").time(),
                figure(comp, *cell, "second_compile_ns").time(),
            ]
        )
    headers = ["rules", "files", "check + lower", "range", "per rule", "2nd compile"]
    return table(headers, rows)


def cold_table(comp: Runs) -> str:
    rows = []
    for name in dig(comp[0], ["cold_start"]) or {} if comp else {}:
        t = figure(comp, "cold_start", name, "median_ns")
        r = figure(comp, "cold_start", name, "ratio_vs_python_pass")
        rows.append([f"`{name}`", t.time(), t.time_range(), r.ratio()])
    return table(["command", "median", "range", "vs `python -c pass`"], rows)


def targets_table(hot: Runs, inv: Runs, base_hot: Runs, base_inv: Runs) -> str:
    """Each target of issue 13: the figure, its range, the baseline and the ratio to it."""
    rows: list[list[str]] = []

    def timed(label: str, goal: str, runs: Runs, base: Runs, *path: str) -> None:
        now, before = figure(runs, *path), figure(base, *path)
        known = now.values and before.values
        ratio = f"{before.middle / now.middle:.1f}x faster" if known else DASH
        rows.append([label, goal, now.time(), now.time_range(), before.time(), ratio])

    shipped = ("shipped", "interceptors")
    names = list(dig(hot[0], list(shipped)) or {}) if hot else []
    goals = {"secret-redactor": "<= 100 us", "pii-redactor": "<= 200 us"}
    for name in names:
        goal = goals.get(name, "<= 50 us")
        timed(f"`{name}`, 10 KB request", goal, hot, base_hot, *shipped, name, "median_ns")
    for size, goal in (("10 KB", "<= 500 us"), ("100 KB", "<= 2 ms")):
        timed(f"whole chain, {size}", goal, hot, base_hot, "shipped", "chain", size, "median_ns")
    mbps, before = (figure(r, "throughput", "policyc", "mb_per_s") for r in (hot, base_hot))
    hand = figure(hot, "throughput", "hand-written RE2 loop", "mb_per_s")
    span = f"{mbps.values[0]:.1f} to {mbps.values[-1]:.1f}" if len(mbps.values) > 1 else DASH
    rows.append(
        [
            "redaction throughput, every built-in pattern",
            ">= 25 MB/s",
            f"{mbps.middle:.1f} MB/s (hand RE2 loop {hand.middle:.1f})",
            span,
            f"{before.middle:.1f} MB/s",
            f"{mbps.middle / before.middle:.1f}x" if before.values else DASH,
        ]
    )
    growth = figure(hot, "redact_rules", "1000", "rules", "growth_vs_10")
    base_growth = figure(base_hot, "redact_rules", "1000", "rules", "growth_vs_10")
    rows.append(
        [
            "1,000 `redact` rules / 10 rules",
            "<= 3x",
            growth.ratio(),
            growth.ratio_range(),
            base_growth.ratio(),
            DASH,
        ]
    )
    inv = [run for run in inv if "common" in run]
    for key in dig(inv[0], ["common"]) or {} if inv else {}:
        for engine, goal in (("cedar", ">= 2x"), ("invariant (fields)", ">= 15x")):
            now = figure(inv, "common", key, engine, "ratio_vs_policyc")
            before = figure(base_inv, "common", key, engine, "ratio_vs_policyc")
            if now.values:
                rows.append(
                    [f"{engine} / policyc, {key}", goal, now.ratio(), now.ratio_range(),
                     before.ratio(), DASH]
                )  # fmt: skip
    headers = ["target", "goal", "measured (middle of runs)", "range", "baseline", "vs baseline"]
    return table(headers, rows, 2)


# --------------------------------------------------------------------------- plots


def plots(inv: Runs, hot: Runs, out: Path) -> list[Path]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("note: matplotlib is not installed (pip install -e '.[bench]'); no plots")
        return []
    written = []
    fig, ax = plt.subplots(figsize=(7, 4.2))
    sizes = {"10 KB": 1e4, "1 MB": 1e6}
    engines = ["policyc", "cedar", "invariant (fields)", "invariant (full trace)", "by hand"]
    for engine in engines:
        xs, ys = [], []
        for label, x in sizes.items():
            f = figure(inv, "common", f"{label} tools/call request (deny)", engine, "median_ns")
            if f.values:
                xs.append(x)
                ys.append(f.middle / 1e3)
        if xs:
            ax.plot(xs, ys, marker="o", label=f"deny tools: {engine}")
    for engine, key in (("pii-redactor", "policyc"), ("redaction by hand (RE2 floor)", "hand")):
        xs, ys = [], []
        for label, x in sizes.items():
            f = figure(inv, "redact", f"{label} tools/call request", key, "median_ns")
            if f.values:
                xs.append(x)
                ys.append(f.middle / 1e3)
        if xs:
            ax.plot(xs, ys, marker="s", linestyle="--", label=engine)
    chain = [(1e4, "10 KB"), (1e5, "100 KB")]
    ys = [figure(hot, "shipped", "chain", k, "median_ns").middle / 1e3 for _, k in chain]
    if hot:
        ax.plot([x for x, _ in chain], ys, marker="^", label="whole shipped chain")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("payload (JSON bytes)")
    ax.set_ylabel("median latency (us)")
    ax.set_title("Latency against payload size (fresh payload per call)")
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    written.append(_save(fig, out / "latency-vs-size.png"))

    fig, ax = plt.subplots(figsize=(7, 4.2))
    counts = ["10", "100", "1000"]
    for kind in ("rules", "rule, N patterns"):
        ys = [figure(hot, "redact_rules", n, kind, "median_ns").middle / 1e3 for n in counts]
        _line(ax, counts, ys, marker="o", label=f"redact on 10 KB: {kind}")
    for engine in ("policyc", "loop of re2 regexes", "re2.Set"):
        ys = [figure(inv, "regex", "32 KB", n, engine, "median_ns").middle / 1e3 for n in counts]
        _line(ax, counts, ys, marker="s", linestyle="--", label=f"matches on 32 KB: {engine}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("rules (or patterns)")
    ax.set_ylabel("median latency (us)")
    ax.set_title("Latency against rule count")
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    written.append(_save(fig, out / "latency-vs-rules.png"))
    return written


def _line(ax: Any, counts: list[str], ys: list[float], **style: Any) -> None:
    points = [(int(n), y) for n, y in zip(counts, ys, strict=True) if y == y]
    if points:
        ax.plot([x for x, _ in points], [y for _, y in points], **style)


def _save(fig: Any, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return path


# --------------------------------------------------------------------------- page


def rewrite(page: str, blocks: dict[str, str]) -> str:
    for name, body in blocks.items():
        pattern = re.compile(
            rf"(<!-- bench:{re.escape(name)} -->\n)(?:.*?\n)?(<!-- /bench:{re.escape(name)} -->)",
            re.DOTALL,
        )
        if not pattern.search(page):
            print(f"note: docs/performance.md has no block `bench:{name}`")
            continue
        page = pattern.sub(lambda m, b=body: m.group(1) + b + "\n" + m.group(2), page)
    return page


def publish(source: Path, names: Sequence[str], target: Path = PUBLISHED / "results") -> None:
    if not source.is_dir() or source.resolve() == target.resolve():
        return
    target.mkdir(parents=True, exist_ok=True)
    for name in names:
        files = sorted(source.glob(f"{name}-*.json")) or sorted(source.glob(f"{name}.json"))
        if files:
            for old in target.glob(f"{name}*.json"):
                old.unlink()
        for f in files:
            shutil.copy2(f, target / f.name)


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--from", dest="source", default=str(RESULTS), help="results directory")
    options.add_argument("--run", choices=sorted(SUITES), help="run these benches first")
    options.add_argument("--runs", type=int, default=1, help="runs of each bench (--run)")
    options.add_argument("--quick", action="store_true", help="the benches' short mode (--run)")
    args = options.parse_args()
    source = Path(args.source)
    if args.run:
        run_benches(SUITES[args.run], args.runs, args.quick)
        source = RESULTS
    publish(source, ("invoke", "hotpath", "server", "compile", *SERVING))
    publish(source / "baseline", ("invoke", "hotpath"), PUBLISHED / "results" / "baseline")
    directory = PUBLISHED / "results"
    inv, hot, srv, comp = (
        load_runs(directory, n) for n in ("invoke", "hotpath", "server", "compile")
    )
    gw, integ, cold, floor = (
        load_runs(directory, n) for n in ("gateway", "integration", "coldcheck", "floor")
    )
    base_inv, base_hot = (load_runs(directory / "baseline", n) for n in ("invoke", "hotpath"))
    if not (inv or hot or gw or srv):
        sys.exit(f"no results in {source}: run the bench scripts first")
    builders: dict[str, Callable[[], str]] = {
        "shipped": lambda: shipped_table(hot),
        "throughput": lambda: throughput_table(hot),
        "values": lambda: values_table(hot),
        "redact-rules": lambda: redact_rules_table(hot),
        "peer": lambda: peer_table(inv),
        "redact": lambda: pair_table(inv, "redact", "policyc", "hand", "ratio_policyc_vs_hand"),
        "validate": lambda: pair_table(inv, "validate", "policyc", "hand", "ratio_policyc_vs_hand"),
        "bounds": lambda: bounds_table(inv),
        "regex": lambda: regex_table(inv),
        "server": lambda: server_table(srv),
        "targets": lambda: targets_table(hot, inv, base_hot, base_inv),
        "compile": lambda: compile_table(comp),
        "cold-start": lambda: cold_table(comp),
        "gateway": lambda: gateway_table(gw),
        "integration": lambda: integration_table(integ),
        "serving": lambda: serving_table(srv),
        "cold-check": lambda: cold_check_table(cold),
        "floor": lambda: floor_table(floor, gw, integ),
    }
    runs = (
        f"{len(inv)} run(s) of bench_invoke.py and {len(hot)} of bench_hotpath.py "
        f"(baseline: {len(base_inv)} and {len(base_hot)}); {len(gw)} of bench_gateway.py, "
        f"{len(integ)} of bench_integration.py, {len(srv)} of bench_server.py and "
        f"{len(cold)} of bench_cold_check.py"
    )
    blocks = {name: build() for name, build in builders.items()}
    blocks["runs"] = f"Figures from {runs}; machine: {_machine(inv or hot)}."
    PAGE.write_text(rewrite(PAGE.read_text(encoding="utf-8"), blocks), encoding="utf-8")
    for path in plots(inv, hot, PUBLISHED):
        print(f"wrote {path.relative_to(ROOT)}")
    print(f"rewrote {PAGE.relative_to(ROOT)} from {runs}")


SERVING = ("gateway", "integration", "coldcheck", "floor")
"""Result names of the serving benches (``server`` is published with the others)."""

BENCHES: dict[str, list[list[str]]] = {
    "gateway": [["bench_gateway.py"]],
    "integration": [["bench_integration.py"]],
    "server": [["bench_server.py", "--size", size] for size in ("1KB", "10KB", "100KB")],
    "coldcheck": [["bench_cold_check.py"]],
    "floor": [["bench_floor.py"]],
    "invoke": [["bench_invoke.py"]],
    "hotpath": [["bench_hotpath.py"]],
    "compile": [["bench_compile.py"]],
}
SUITES = {
    "serving": ("gateway", "integration", "server", "coldcheck", "floor"),
    "all": tuple(BENCHES),
}
_NO_QUICK = {"bench_cold_check.py"}


def run_benches(names: Sequence[str], runs: int, quick: bool) -> None:
    """Each bench ``runs`` times into ``bench/results/NAME-N.json``, old results removed."""
    import os
    import subprocess

    RESULTS.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for name in names:
        for old in RESULTS.glob(f"{name}-*.json"):
            old.unlink()
        number = 0
        for _ in range(runs):
            for argv in BENCHES[name]:
                number += 1
                out = RESULTS / f"{name}-{number}.json"
                extra = ["--quick"] if quick and argv[0] not in _NO_QUICK else []
                command = [sys.executable, str(ROOT / "bench" / argv[0]), *argv[1:], *extra]
                print(f"load {os.getloadavg()[0]:.2f}: {' '.join(command[1:])}", flush=True)
                subprocess.run([*command, "--json", str(out)], env=env, check=True)


def _machine(runs: Runs) -> str:
    info = runs[0].get("machine", {}) if runs else {}
    load = info.get("loadavg_at_start")
    cpu = f"{info.get('cpu', '?')}, {info.get('cpus', '?')} CPUs"
    return f"{cpu}, Python {info.get('python')}, load average at start {load}"


if __name__ == "__main__":
    main()

"""A fully cold ``policyc check`` of 100 policy files, against ``python -c pass``.

The 100 files are the shipped policies, ten copies of each with their
interceptors and patterns renamed, so the set checks clean. Every sample is a
fresh process. "Cold" means no cache of any kind: each run gets an empty temp
directory (``TMPDIR``), so lark finds no cached parser tables there; "warm"
runs share one temp directory, as a developer's repeated runs do. The figures
are the median wall time and the median CPU time (user + system) of the child,
interleaved run by run with ``python -c pass`` so that load from elsewhere
lands on all of them; CPU time is the steadier figure on a busy machine.

One more run under ``python -X importtime`` lists the imports that cost most,
the first thing to look at when start-up grows.

    python bench/bench_cold_check.py             # 15 runs of each
    python bench/bench_cold_check.py --runs 5 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine

ROOT = Path(__file__).resolve().parents[1]
COPIES = 10
_NAMED = re.compile(r"^(validator|mutator|pattern) ([A-Za-z0-9_-]+)", re.MULTILINE)


def write_policies(directory: Path) -> list[Path]:
    """Ten renamed copies of each shipped policy: 100 files that check clean."""
    shipped = sorted(
        p for p in (ROOT / "policies").glob("*.policy") if not p.stem.endswith("_test")
    )
    written = []
    for copy in range(1, COPIES + 1):
        for source in shipped:
            text = source.read_text(encoding="utf-8")
            text = _NAMED.sub(
                lambda m, c=copy: f"{m[1]} {m[2]}{'_' if m[1] == 'pattern' else '-'}{c}", text
            )
            for name in re.findall(r"^pattern ([A-Z_]+)_\d+ ", text, re.MULTILINE):
                text = re.sub(rf"\b{name}\b(?!_{copy})", f"{name}_{copy}", text)
            target = directory / f"{source.stem}-{copy}.policy"
            target.write_text(text, encoding="utf-8")
            written.append(target)
    return written


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds of the child, and its exit code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.returncode


def import_costs(argv: list[str], env: dict[str, str], top: int = 12) -> list[dict[str, Any]]:
    """The imports with the largest cumulative time, from one ``-X importtime`` run."""
    done = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]], env=env, capture_output=True, text=True
    )
    rows = []
    for line in done.stderr.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if match:
            depth = len(match[3]) // 2
            rows.append(
                {
                    "module": match[4],
                    "self_us": int(match[1]),
                    "cumulative_us": int(match[2]),
                    "depth": depth,
                }
            )
    top_level = [r for r in rows if r["depth"] == 0]
    total = sum(r["cumulative_us"] for r in top_level)
    ranked = sorted(rows, key=lambda r: -r["cumulative_us"])[:top]
    return [{"module": "(all imports)", "cumulative_us": total, "self_us": 0, "depth": 0}, *ranked]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    info = machine()
    python = sys.executable
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory() as work:
        policies = Path(work) / "policies"
        policies.mkdir()
        write_policies(policies)
        check = [python, "-m", "policy_engine.cli.main", "check", str(policies)]
        warm_tmp = Path(work) / "warm-tmp"
        warm_tmp.mkdir()
        warm_env = {**env, "TMPDIR": str(warm_tmp)}
        _, _, code = run_once(check, warm_env)  # fills the warm cache; must check clean
        if code != 0:
            raise SystemExit(f"the generated policies do not check clean (exit {code})")
        samples: dict[str, list[tuple[float, float]]] = {"pass": [], "cold": [], "warm": []}
        for run in range(args.runs):
            cold_tmp = Path(work) / f"cold-{run}"
            cold_tmp.mkdir()
            samples["pass"].append(run_once([python, "-c", "pass"], env)[:2])
            samples["cold"].append(run_once(check, {**env, "TMPDIR": str(cold_tmp)})[:2])
            samples["warm"].append(run_once(check, warm_env)[:2])
        cold_tmp = Path(work) / "cold-imports"
        cold_tmp.mkdir()
        imports = import_costs(check, {**env, "TMPDIR": str(cold_tmp)})
    figures = {
        name: {
            "wall_s": statistics.median(w for w, _ in values),
            "cpu_s": statistics.median(c for _, c in values),
        }
        for name, values in samples.items()
    }
    base = figures["pass"]
    print(f"bench_cold_check: policyc check of {COPIES * 10} files, {args.runs} runs each")
    print(f"{'case':<22} {'wall s':>8} {'cpu s':>8} {'wall / pass':>12}")
    for name, label in (
        ("pass", "python -c pass"),
        ("cold", "check, no caches"),
        ("warm", "check, lark cache"),
    ):
        row = figures[name]
        ratio = row["wall_s"] / base["wall_s"]
        print(f"{label:<22} {row['wall_s']:>8.3f} {row['cpu_s']:>8.3f} {ratio:>12.1f}")
    print("imports (one cold run, -X importtime; microseconds):")
    for row in imports:
        print(f"  {row['module']:<45} {row['cumulative_us']:>9}")
    load_end = [round(x, 2) for x in os.getloadavg()]
    print(f"load average {info['loadavg_at_start']} -> {load_end}")
    if args.json:
        document = {
            "figures": figures,
            "imports": imports,
            "runs": args.runs,
            "machine": info,
            "loadavg_at_end": load_end,
        }
        args.json.write_text(json.dumps(document, indent=2) + "\n")


if __name__ == "__main__":
    main()

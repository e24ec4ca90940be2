"""The redaction packs with the built-in patterns of another git revision, in the same run.

    python bench/bench_patterns_ab.py                  # against HEAD's patterns
    python bench/bench_patterns_ab.py --base main~3    # against any revision
    python bench/bench_patterns_ab.py --quick --json path/to/out.json

A change to ``policy_engine/language/builtin_patterns.py`` must not make the
packs much slower, and two processes run one after the other on a shared
machine differ by more than the change does. So this script compiles
``policies/`` twice in one process: once with the working tree's patterns,
once with the patterns file of ``--base`` (read with ``git show``; the rest
of the engine is the working tree's), and times ``pii-redactor`` and
``secret-redactor`` on the payloads of ``bench_hotpath.py``, the two
contenders interleaved round by round (``_common.measure``), each with its
own pool of fresh payloads.

Not a test: no figure is asserted.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from _common import (
    FreshPayloads,
    fmt_ns,
    fmt_ratio,
    machine,
    measure,
    pool_size,
    print_machine,
    print_table,
    write_results,
)
from bench_hotpath import mixed_text, row_value
from bench_invoke import tools_call_request

import policy_engine.language.resolve as resolve
from policy_engine.compiler import PolicySet, compile_policies

ROOT = Path(__file__).resolve().parents[1]
PATTERNS = "policy_engine/language/builtin_patterns.py"
PACKS = ("pii-redactor", "secret-redactor")


def patterns_at(revision: str) -> ModuleType:
    """The built-in patterns module at ``revision`` (git show), imported under another name."""
    source = subprocess.run(
        ["git", "show", f"{revision}:{PATTERNS}"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    name = "_builtin_patterns_base"
    spec = importlib.util.spec_from_loader(name, loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while being defined
    exec(compile(source, f"{revision}:{PATTERNS}", "exec"), module.__dict__)
    return module


def compile_with(patterns: Any) -> PolicySet:
    """``policies/`` compiled with ``patterns`` in place of the built-ins (resolve reads them)."""
    current = resolve.BUILTIN_PATTERNS
    resolve.BUILTIN_PATTERNS = patterns
    try:
        return compile_policies([ROOT / "policies"])
    finally:
        resolve.BUILTIN_PATTERNS = current


def payloads() -> dict[str, tuple[str, dict[str, Any]]]:
    """Label -> (direction, payload): the shapes bench_hotpath.py times."""
    return {
        "10 KB tools/call request": ("request", tools_call_request(10_000)),
        "400 short values": (
            "response",
            {"content": [{"type": "text", "text": row_value(n)} for n in range(400)]},
        ),
        "100 x 1 KB mixed text": (
            "response",
            {"content": [{"type": "text", "text": mixed_text(n)} for n in range(100)]},
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="HEAD", help="git revision of the baseline patterns")
    parser.add_argument("--quick", action="store_true", help="shorter time budget per figure")
    parser.add_argument("--json", help="where to write the results (default bench/results/)")
    args = parser.parse_args()
    info = machine()
    print_machine(info)
    base = compile_with(patterns_at(args.base).BUILTIN_PATTERNS)
    head = compile_with(resolve.BUILTIN_PATTERNS)
    budget = 0.5 if args.quick else 2.0
    rows = []
    out: dict[str, Any] = {"machine": info, "base": args.base, "cases": {}}
    for label, (direction, payload) in payloads().items():
        size = len(str(payload))
        for pack in PACKS:
            cases: dict[str, Callable[[], object]] = {}
            for side, policy in (("base", base), ("working tree", head)):
                fresh = FreshPayloads(payload, pool_size(size))
                cases[side] = lambda p=policy, f=fresh, n=pack, d=direction: p.invoke_sync(
                    n, "tools/call", d, f()
                )
            stats = measure(cases, budget_s=budget)
            ratio = stats["working tree"].median_ns / stats["base"].median_ns
            rows.append(
                [
                    label,
                    pack,
                    fmt_ns(stats["base"].median_ns),
                    fmt_ns(stats["working tree"].median_ns),
                    fmt_ratio(ratio),
                ]
            )
            out["cases"][f"{label} / {pack}"] = {side: s.to_json() for side, s in stats.items()} | {
                "ratio": ratio
            }
    print(f"## The packs: patterns of {args.base} against the working tree's\n")
    print_table(["payload", "pack", "base", "working tree", "ratio"], rows, right=2)
    print(f"\nresults written to {write_results('bench_patterns_ab', out, args.json)}")


if __name__ == "__main__":
    main()

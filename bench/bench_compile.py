"""Compile time of generated policy sets, and the cold start of ``policyc check``.

    python bench/bench_compile.py            # full run: prints tables, writes JSON
    python bench/bench_compile.py --quick    # fewer fresh interpreters per figure
    python bench/bench_compile.py --json out.json

What it measures:

1. For generated sets of 10, 100 and 1,000 rules (a mix of ``deny if``
   comparisons, ``matches`` regexes, ``like`` lists and pattern redactions),
   the time to compile them in a *fresh* interpreter: each sample is a new
   ``python`` process that imports the package, loads the grammar, runs the
   front end (``check_sources``, whose ``timings`` give parse, resolve, check
   and lint) and lowers the model into a ``PolicySet``. The same process then
   compiles the same sources a second time, which shows what in-process
   caches (RE2's compiled-regex cache, ``regex_problem``) save. Reported as
   medians over processes, per rule, and as the ratio of the per-rule cost to
   the 10-rule set's.
2. The lark grammar: ``parser()`` loads the LALR tables from lark's cache file
   (``cache=True`` writes it to the temp directory, keyed on the grammar text,
   options and lark version). That cache survives between processes, so a
   "fresh" interpreter still gets a warm grammar. To show what a first run on
   a new machine pays, the script also times building the same parser with
   ``cache=False`` (it never deletes the shared cache file).
3. ``policyc check policies`` as a subprocess, against ``python -c pass`` and
   ``python -c "import policy_engine.cli.main"`` in the same run, the three
   interleaved; medians over runs and the ratio to ``python -c pass``.

Python's own bytecode caches (``__pycache__``) are warm, as they would be for
any installed package. Not a test: no figure is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _common import fmt_ns, fmt_ratio, machine, print_machine, print_table, summarize, write_results

REPO = Path(__file__).resolve().parent.parent
SIZES = (10, 100, 1000)
RULES_PER_GROUP = 10  # one validator (7 rules) and one mutator (3 rules)
GROUPS_PER_FILE = 5  # so a file holds 50 rules, and 1,000 rules are 20 files
STAGES = ("parse", "resolve", "check", "lint")

# --------------------------------------------------------------------------- sources


def _validator(g: int) -> str:
    """Seven rules: comparisons, regexes, glob lists, a compound condition."""
    a, b = 2 * g, 2 * g + 1
    return f"""
validator guard-{g} "Generated guard {g}" version "1.0.{g}" {{
  on tools/call request
  param limit{g}: int = {100 + g}

  deny if $.arguments.amount > {1000 + g} "amount over {1000 + g}" code amount-{g}
  warn if length($.arguments.query) >= param.limit{g} "long query" code long-query-{g}
  deny if any $.arguments.* matches /(?i)\\b(drop|truncate)\\s+table_{a}\\b/
    "ddl on table {a}" code ddl-{a}
  warn if any $.arguments.* matches /(?i)\\bproject[-_ ]?codename[-_ ]?{b}\\b/
    "codename {b}" code codename-{b}
  deny if $.name like ["tool_{a}_*", "admin_{a}", "*_unsafe_{a}"]
    "tool {a} is blocked" code tool-{a}
  info if $.arguments.region like ["eu-*-{b}", "us-gov-{b}"] "regulated region" code region-{b}
  deny if $.arguments.mode == "raw-{g}" and not "admin" in context.principal.claims.roles
    "raw mode needs admin" code raw-{g}
}}
"""


def _mutator(g: int) -> str:
    """Three redactions: two with built-in patterns, one with an inline regex."""
    return f"""
mutator scrub-{g} "Generated redactor {g}" version "1.0.{g}" {{
  on tools/call both priority {10 * (g + 1)}
  redact $.arguments.note_{g} matching EMAIL, SSN, PHONE
  redact $.content[*].text matching CREDIT_CARD, IBAN with "[PAYMENT:{{pattern}}]"
  redact $..ticket_{g} matching /(?i)\\bsecret-{g}-[a-z0-9]{{8,}}\\b/ with "[TICKET]"
}}
"""


def generate_sources(rules: int) -> dict[str, str]:
    """``rules`` rules (a multiple of 10) spread over files of 50 rules each."""
    if rules % RULES_PER_GROUP:
        raise ValueError(f"rule count must be a multiple of {RULES_PER_GROUP}")
    groups = rules // RULES_PER_GROUP
    files: dict[str, str] = {}
    for start in range(0, groups, GROUPS_PER_FILE):
        parts = [f"# Generated for bench_compile: groups {start}..\n"]
        for g in range(start, min(start + GROUPS_PER_FILE, groups)):
            parts.append(_validator(g))
            parts.append(_mutator(g))
        files[f"generated/set_{start // GROUPS_PER_FILE:03d}.policy"] = "".join(parts)
    return files


# --------------------------------------------------------------------------- children


def child_compile(rules: int) -> dict[str, Any]:
    """Runs in a fresh interpreter: time each step of a first and a second compile."""
    sources = generate_sources(rules)
    out: dict[str, Any] = {}
    t0 = time.perf_counter_ns()
    from policy_engine.compiler import PolicySet
    from policy_engine.language.grammar import parser
    from policy_engine.language.pipeline import check_sources

    t1 = time.perf_counter_ns()
    parser()
    t2 = time.perf_counter_ns()
    result = check_sources(sources)
    t3 = time.perf_counter_ns()
    if not result.ok or result.model is None:
        raise SystemExit(f"generated sources do not check: {result.errors[:3]}")
    policy_set = PolicySet(result.model)
    t4 = time.perf_counter_ns()
    out["import_ns"] = t1 - t0
    out["grammar_ns"] = t2 - t1
    out["front_end_ns"] = t3 - t2
    out["stages_ns"] = {k: v * 1e9 for k, v in result.timings.items()}
    out["lower_ns"] = t4 - t3
    out["compile_ns"] = t4 - t2  # what compile_sources costs once the grammar is loaded
    out["rules"] = sum(len(i.rule_refs()) for i in policy_set.interceptors.values())
    out["warnings"] = len(result.warnings)
    t5 = time.perf_counter_ns()
    again = check_sources(sources)
    assert again.model is not None
    PolicySet(again.model)
    out["second_compile_ns"] = time.perf_counter_ns() - t5
    return out


def child_grammar() -> dict[str, Any]:
    """Build the parser exactly as ``grammar.parser()`` does, but without lark's cache."""
    from lark import Lark

    from policy_engine.language import grammar

    text = grammar.grammar_path().read_text(encoding="utf-8")
    start = time.perf_counter_ns()
    Lark(
        text,
        parser="lalr",
        lexer="contextual",
        propagate_positions=True,
        maybe_placeholders=True,
        lexer_callbacks={"COMMENT": grammar._on_comment},
        cache=False,
    )
    uncached = time.perf_counter_ns() - start
    start = time.perf_counter_ns()
    grammar.parser()
    cached = time.perf_counter_ns() - start
    return {"uncached_ns": uncached, "cached_ns": cached}


def run_child(*args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, *args],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


# --------------------------------------------------------------------------- parent


def bench_compile(processes: int) -> dict[str, Any]:
    print(f"## Compile time, fresh interpreter per sample (median of {processes} processes)\n")
    samples: dict[int, list[dict[str, Any]]] = {n: [] for n in SIZES}
    # Interleave sizes so a burst of load on the machine hits all of them.
    for _ in range(processes):
        for n in SIZES:
            samples[n].append(run_child("--child", str(n)))

    def med(n: int, key: str) -> float:
        return statistics.median(s[key] for s in samples[n])

    def med_stage(n: int, stage: str) -> float:
        return statistics.median(s["stages_ns"].get(stage, 0.0) for s in samples[n])

    figures: dict[str, Any] = {}
    base_per_rule = med(SIZES[0], "compile_ns") / SIZES[0]
    rows = []
    previous: tuple[int, float] | None = None
    for n in SIZES:
        compile_ns = med(n, "compile_ns")
        per_rule = compile_ns / n
        # What one more rule costs, without the fixed first-use costs.
        marginal = (compile_ns - previous[1]) / (n - previous[0]) if previous else None
        previous = (n, compile_ns)
        stats = summarize([s["compile_ns"] for s in samples[n]])
        figures[str(n)] = {
            "rules": samples[n][0]["rules"],
            "files": len(generate_sources(n)),
            "compile": stats.to_json(),
            "per_rule_ns": per_rule,
            "per_rule_ratio_vs_10": per_rule / base_per_rule,
            "marginal_per_rule_ns": marginal,
            "second_compile_per_rule_ns": med(n, "second_compile_ns") / n,
            "stages_ns": {st: med_stage(n, st) for st in STAGES},
            "lower_ns": med(n, "lower_ns"),
            "second_compile_ns": med(n, "second_compile_ns"),
            "import_ns": med(n, "import_ns"),
            "grammar_cached_ns": med(n, "grammar_ns"),
            "warnings": samples[n][0]["warnings"],
        }
        rows.append(
            [
                f"{n:,}",
                str(figures[str(n)]["files"]),
                fmt_ns(compile_ns),
                fmt_ns(per_rule),
                fmt_ratio(per_rule / base_per_rule),
                fmt_ns(marginal) if marginal is not None else "-",
                fmt_ns(med(n, "second_compile_ns")),
                fmt_ns(med(n, "second_compile_ns") / n),
                f"{stats.spread:.0%}",
            ]
        )
    print_table(
        [
            "rules",
            "files",
            "compile (check + lower)",
            "per rule",
            "per rule vs 10",
            "marginal per rule",
            "2nd compile, same process",
            "2nd, per rule",
            "IQR/median",
        ],
        rows,
    )

    stage_rows = []
    for n in SIZES:
        f = figures[str(n)]
        total = f["compile"]["median_ns"]
        cells = [f"{n:,}"]
        for stage in STAGES:
            cells.append(fmt_ns(f["stages_ns"][stage]))
        cells.append(fmt_ns(f["lower_ns"]))
        parse_share = f["stages_ns"]["parse"] / total if total else 0.0
        cells.append(f"{parse_share:.0%}")
        stage_rows.append(cells)
    print("Per stage (medians; `parse` includes building the AST):\n")
    print_table(["rules", *STAGES, "lower", "parse share"], stage_rows)
    first = figures[str(SIZES[0])]
    print(
        f"Outside the compile figures, per fresh process: importing the compiler "
        f"{fmt_ns(first['import_ns'])}, loading the grammar from lark's cache "
        f"{fmt_ns(first['grammar_cached_ns'])}.\n"
    )
    return figures


def bench_grammar(processes: int) -> dict[str, Any]:
    runs = [run_child("--child-grammar") for _ in range(processes)]
    uncached = summarize([r["uncached_ns"] for r in runs])
    cached = summarize([r["cached_ns"] for r in runs])
    print(f"## Grammar load (median of {processes} processes)\n")
    print_table(
        ["lark parser", "median", "ratio"],
        [
            ["from lark's cache file (cache=True)", fmt_ns(cached.median_ns), "1.00x"],
            [
                "built from the grammar (cache=False)",
                fmt_ns(uncached.median_ns),
                fmt_ratio(uncached.median_ns / cached.median_ns),
            ],
        ],
    )
    return {"cached": cached.to_json(), "uncached": uncached.to_json()}


def bench_cold_start(runs: int) -> dict[str, Any]:
    policyc = Path(sys.executable).with_name("policyc")
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "python -c 'import policy_engine.cli.main'": [
            sys.executable,
            "-c",
            "import policy_engine.cli.main",
        ],
        "python -c 'import policy_engine.language.pipeline'": [
            sys.executable,
            "-c",
            "import policy_engine.language.pipeline",
        ],
        "policyc check policies": [str(policyc), "check", "policies"],
    }
    if not policyc.exists():
        print(f"note: {policyc} not found; timing `python -m policy_engine.cli.main` instead\n")
        commands["policyc check policies"] = [
            sys.executable,
            "-m",
            "policy_engine.cli.main",
            "check",
            "policies",
        ]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    samples: dict[str, list[int]] = {name: [] for name in commands}
    for argv in commands.values():  # warm-up: page cache, pyc files
        subprocess.run(argv, cwd=REPO, env=env, capture_output=True, check=False)
    for _ in range(runs):
        for name, argv in commands.items():
            start = time.perf_counter_ns()
            done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, check=False)
            samples[name].append(time.perf_counter_ns() - start)
            if done.returncode not in (0, 1):
                raise SystemExit(f"{name} failed ({done.returncode}): {done.stderr[-500:]}")
    stats = {name: summarize(s) for name, s in samples.items()}
    base = stats["python -c pass"].median_ns
    print(f"## Cold start of a subprocess (median of {runs} runs each, interleaved)\n")
    print_table(
        ["command", "median", "vs python -c pass", "minus python -c pass"],
        [
            [
                name,
                fmt_ns(s.median_ns),
                fmt_ratio(s.median_ns / base),
                fmt_ns(s.median_ns - base) if name != "python -c pass" else "-",
            ]
            for name, s in stats.items()
        ],
    )
    return {
        name: {**s.to_json(), "ratio_vs_python_pass": s.median_ns / base}
        for name, s in stats.items()
    }


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--quick", action="store_true", help="fewer processes and runs")
    options.add_argument("--json", help="where to write the results (default bench/results/)")
    options.add_argument("--child", type=int, help=argparse.SUPPRESS)
    options.add_argument("--child-grammar", action="store_true", help=argparse.SUPPRESS)
    args = options.parse_args()
    if args.child is not None:
        print(json.dumps(child_compile(args.child)))
        return
    if args.child_grammar:
        print(json.dumps(child_grammar()))
        return
    processes = 3 if args.quick else 7
    runs = 5 if args.quick else 15
    info = machine()
    print_machine(info)
    results = {
        "machine": info,
        "compile": bench_compile(processes),
        "grammar": bench_grammar(processes),
        "cold_start": bench_cold_start(runs),
    }
    path = write_results("compile", results, args.json)
    print(f"results written to {path}")


if __name__ == "__main__":
    main()

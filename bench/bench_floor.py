"""How little the shipped redactors could cost on PII-dense text: the RE2 calls alone.

    python bench/bench_floor.py            # full run: prints a table, writes JSON
    python bench/bench_floor.py --quick    # shorter time budget per figure

The google-re2 binding finds one match per `Match` call: it has no findall.
So whatever Python does around them, the shipped redactors on a request
carrying the serving benches' PII-dense text (`_payloads.pii_text`, personal
data every ~60 bytes) make at least one `Match` call per value they redact.
This script times those calls and nothing else, on the text of a 1, 10 and
100 KB `tools/call` as the gateway and integration benches send it, in the
same rounds as the whole shipped chain and a `json.dumps` of the request:

* ``one pass per pattern``: every pattern of `pii-redactor` and
  `secret-redactor` scanned over the text in line mode, one call per match
  plus one that finds nothing, with no Python work between calls: the RE2
  part of what the matcher does today (a pattern with a check or a value
  group needs a pass of its own, so a skipped candidate never hides another
  pattern's hit);
* ``one alternation``: the same patterns joined in one leftmost-first
  alternation, one pass each redactor: one call per hit;
* ``no submatches``: one pass per pattern with every group made
  non-capturing, so RE2 answers each call from its DFA alone without
  locating the value inside the match: the cheapest call the binding makes,
  a floor for any design that scans pattern by pattern;
* ``one alternation, no submatches``: both at once, one DFA pass of each
  redactor's alternation and one call per hit: the floor below which no
  design over this binding goes.

Each regex is compiled as the matcher compiles it for this text: in Latin-1
when the text is ASCII-only (`TextMatcher._scan_programs`), else in UTF-8.

The request side alone is counted; a gateway also runs the chain on the
result. Compare the floors with what a target allows: at most 1.5x a
pass-through gateway or a plain in-process call means the chain may add half
of that call's own cost (docs/performance.md, "Summary").

Not a test: no figure is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import (
    FreshPayloads,
    fmt_ns,
    fmt_ratio,
    machine,
    measure,
    print_machine,
    print_table,
    write_results,
)
from _payloads import SIZES, describe, pii_text

from policy_engine.chain import InterceptorChain
from policy_engine.compiler import compile_policies
from policy_engine.compiler.matchers import (
    UNANCHORED,
    TextMatcher,
    binding,
    compiled,
    line_mode,
)
from policy_engine.wire import ChainExecutionParams

POLICIES = Path(__file__).resolve().parent.parent / "policies"
REDACTORS = ("pii-redactor", "secret-redactor")
PASSES = "RE2 calls, one pass per pattern"
ALTERNATION = "RE2 calls, one alternation"
BARE = "RE2 calls, no submatches"
BARE_UNION = "RE2 calls, one alternation, no submatches"
CHAIN = "whole shipped chain"
JSON_DUMPS = "json.dumps"


def _matchers(policy: Any, name: str) -> list[TextMatcher]:
    """The `matching` rules' matchers of one mutator, in rule order."""
    found = []
    for mutation in policy.interceptors[name].mutations:
        rewrite = getattr(mutation, "rewrite", None)
        if rewrite is not None:
            found.append(rewrite.matcher)
    return found


def _line_regexes(matcher: TextMatcher) -> list[str]:
    """The matcher's patterns in line mode, as its batch scan runs them."""
    probe = matcher.probe_regex
    if probe is None:
        raise SystemExit("a shipped redactor pattern is not context free: no line-mode scan")
    return [line_mode(spec.regex) for spec in matcher.specs]


def non_capturing(regex: str) -> str:
    """``regex`` with every group made non-capturing (escapes and classes left alone)."""
    out: list[str] = []
    k, in_class = 0, False
    while k < len(regex):
        char = regex[k]
        if char == "\\":
            out.append(regex[k : k + 2])
            k += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            if regex[k + 1 : k + 2] == "]" or regex[k + 1 : k + 3] == "^]":
                skip = 2 if regex[k + 1] == "]" else 3
                out.append(regex[k : k + skip])
                k += skip
                continue
        elif char == "(":
            if regex.startswith("(?P<", k):
                out.append("(?:")
                k = regex.index(">", k) + 1
                continue
            if not regex.startswith("(?", k):
                out.append("(?:")
                k += 1
                continue
        out.append(char)
        k += 1
    return "".join(out)


def _calls(compiled: Any, data: bytes) -> int:
    """Scan ``data`` with one `Match` call per match, as the matcher steps; the calls made."""
    pos, end, calls = 0, len(data), 0
    match = compiled.Match
    while True:
        calls += 1
        found, stop = match(UNANCHORED, data, pos, end)[0]
        if stop < 0 or stop == end:
            return calls
        pos = stop if stop > found else stop + 1


def _scan(regexes: list[Any], data: bytes) -> int:
    """Every regex's scan of ``data``; the `Match` calls made in all."""
    return sum(_calls(compiled, data) for compiled in regexes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="shorter time budget per figure")
    parser.add_argument("--json", help="where to write the results (default bench/results/)")
    args = parser.parse_args()
    info = machine()
    print_machine(info)
    policy = compile_policies([POLICIES])
    # One line-mode regex per pattern (passes), and one alternation per redactor.
    per_pattern: list[Any] = []
    joined: list[Any] = []
    bare: list[Any] = []
    bare_joined: list[Any] = []
    latin1 = all(pii_text(1, size).isascii() for size in SIZES.values())
    for name in REDACTORS:
        for matcher in _matchers(policy, name)[:1]:  # `$.arguments` (pii) / `$` (secrets)
            sources = _line_regexes(matcher)
            per_pattern += [binding(compiled(s, latin1)) for s in sources]
            for source in sources:
                plain = compiled(non_capturing(source), latin1)
                if plain.groups:
                    raise SystemExit(f"a group is left in {plain.pattern}")
                bare.append(binding(plain))
            union = "|".join(f"(?:{s})" for s in sources)
            joined.append(binding(compiled(union, latin1)))
            bare_joined.append(binding(compiled(non_capturing(union), latin1)))
    loop = asyncio.new_event_loop()
    chain = loop.run_until_complete(
        InterceptorChain.connect(local={"policies": policy}).__aenter__()
    )
    budget = 0.4 if args.quick else 1.5
    rows: list[list[str]] = []
    out: dict[str, Any] = {"machine": info, "sizes": {}}
    for label, size in SIZES.items():
        request = {"name": "echo", "arguments": {"text": pii_text(1, size)}}
        data = request["arguments"]["text"].encode("utf-8")
        scans = {PASSES: per_pattern, ALTERNATION: joined, BARE: bare, BARE_UNION: bare_joined}
        calls = {what: _scan(regexes, data) for what, regexes in scans.items()}
        payloads = FreshPayloads(request, 16)
        dumps = FreshPayloads(request, 16)

        def run_chain(f: FreshPayloads = payloads) -> object:
            params = ChainExecutionParams(event="tools/call", phase="request", payload=f())
            return loop.run_until_complete(chain.execute(params, side="sending"))

        cases: dict[str, Callable[[], object]] = {CHAIN: run_chain}
        for what, regexes in scans.items():
            cases[what] = lambda r=regexes, text=data: _scan(r, text)
        cases[JSON_DUMPS] = lambda f=dumps: json.dumps(f())
        stats = measure(cases, budget_s=budget)
        base = stats[JSON_DUMPS].median_ns
        chain_ns = stats[CHAIN].median_ns
        cell: dict[str, Any] = {"payload": describe(label), "calls": calls}
        for what, st in stats.items():
            rows.append(
                [
                    label,
                    what,
                    f"{calls[what]:,}" if what in calls else "",
                    fmt_ns(st.median_ns),
                    fmt_ratio(st.median_ns / base),
                    f"{st.median_ns / chain_ns:.0%}",
                ]
            )
            cell[what] = {**st.to_json(), "vs_json_dumps": st.median_ns / base}
        out["sizes"][label] = cell
    loop.close()
    out["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    print(f"## The RE2 floor on PII-dense tools/call text ({describe('each size')})\n")
    print_table(["request", "what", "Match calls", "median", "vs json.dumps", "of the chain"], rows)
    print(f"\nresults written to {write_results('floor', out, args.json)}")


if __name__ == "__main__":
    main()

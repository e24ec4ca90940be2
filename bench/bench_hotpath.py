"""The hot path as a server sees it: the shipped set, redaction throughput, rule scaling.

    python bench/bench_hotpath.py            # full run: prints tables, writes JSON
    python bench/bench_hotpath.py --quick    # shorter time budget per figure
    python bench/bench_hotpath.py --only shipped,throughput,redact-rules

Every timed call takes a fresh payload object from a rotating pool of deep
copies (``_common.FreshPayloads``), as a server parses every message afresh.

Sections (medians; ratios are within this run):

* ``shipped``: each interceptor of ``policies/`` that hooks a ``tools/call``
  request, by ``invoke_sync`` on a PII-dense 10 KB request (a CRM bulk update:
  every record has e-mail, SSN and card fields and a note with personal data),
  and the whole chain (``InterceptorChain`` over the compiled set, in process)
  and pii-redactor alone on 1 KB, 10 KB and 100 KB ones; every figure with its
  ratio to ``json.dumps`` of the same payload, timed in the same rounds.
* ``throughput``: one ``redact ... matching`` rule holding every built-in
  pattern over 1 MB of mixed text in 1 KB strings, against two hand-written
  RE2 loops doing the same work (the same regexes and candidate checks, one
  pass per checked pattern, copy on write): one calling the RE2 binding as
  policyc does (the baseline of the ratios), one through re2's public wrapper.
  Reported in MB/s of text.
* ``values``: one ``redact ... matching`` rule with the seven patterns of
  ``pii-redactor`` over a result of 400 short strings, most of them a value
  alone (an e-mail, an SSN, a card number), against the same hand-written
  RE2 loops.
* ``redact-rules``: 10, 100 and 1,000 ``redact ... matching`` rules over one
  10 KB field, against one rule holding the same patterns: how the cost grows
  with the number of rules.

Not a test: no figure is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import re2
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
from bench_invoke import _clean_text, paragraph, tools_call_request

from policy_engine.chain import InterceptorChain
from policy_engine.compiler import PolicySet, compile_policies, compile_sources
from policy_engine.compiler.candidate_checks import CANDIDATE_CHECKS
from policy_engine.compiler.matchers import UNANCHORED, binding, compiled
from policy_engine.language.builtin_patterns import BUILTIN_PATTERNS
from policy_engine.wire import ChainExecutionParams

POLICIES = Path(__file__).resolve().parent.parent / "policies"
_SECRETS = (
    "key AKIAIOSFODNN7EXAMPLE in config",
    "token ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8" + " leaked",
    "stripe sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc" + " here",
    "api_key = 'Zx8Kq2Lm9Pw4Rt7Yb3Nc6Vd1'",
)


def mixed_text(n: int) -> str:
    """About 1 KB of prose with personal data, and a credential every fourth string."""
    text = paragraph(n) + paragraph(n + 1)
    if n % 4 == 0:
        text += " " + _SECRETS[(n // 4) % len(_SECRETS)]
    return text[:1000]


PII_NAMES = ("EMAIL", "SSN", "CREDIT_CARD", "IBAN", "IPV4", "IPV6", "PHONE")
_ROW_VALUES = (
    "customer.{n}@example.com",
    "{a:03d}-{b:02d}-{c:04d}",
    "4111 1111 1111 1111",
    "+1415555{c:04d}",
    "DE89370400440532013000",
    "10.{a}.{b}.{c}",
    "pending",
    "Lyon",
)


def row_value(n: int) -> str:
    """One cell of a result row: a value alone (an e-mail, an SSN, a card...) or a word."""
    template = _ROW_VALUES[n % len(_ROW_VALUES)]
    return template.format(n=n, a=100 + n % 500, b=10 + n % 89, c=1000 + n % 9000)


def _json_len(payload: Any) -> int:
    return len(json.dumps(payload))


PAYLOAD_NAME = "CRM bulk update: records with e-mail, SSN and card fields, notes full of PII"
SIZES = (("1 KB", 1_000), ("10 KB", 10_000), ("100 KB", 100_000))
JSON_DUMPS = "json.dumps"
PII = "pii-redactor"
BINDING_LOOP = "hand-written loop, RE2 binding"
WRAPPER_LOOP = "hand-written loop, re2 wrapper"


class HotPath:
    def __init__(self, budget_s: float, policies: Path = POLICIES) -> None:
        self.budget_s = budget_s
        self.policies = policies
        self.results: dict[str, Any] = {}

    def _measure(self, cases: dict[str, Callable[[], object]]) -> dict[str, Any]:
        return measure(cases, budget_s=self.budget_s)

    # -- shipped ----------------------------------------------------------------

    def shipped(self) -> None:
        policy = compile_policies([self.policies])
        names = [d.name for d in policy.descriptors() if d.hooks_event("tools/call", "request")]
        print(f"## The shipped set on PII-dense tools/call requests ({PAYLOAD_NAME})\n")
        requests = {label: tools_call_request(target) for label, target in SIZES}
        out: dict[str, Any] = {"payload": PAYLOAD_NAME, "interceptors": {}}
        # Each interceptor alone, on the 10 KB request, against `json.dumps` of it.
        request = requests["10 KB"]
        fresh = {name: FreshPayloads(request, pool_size(_json_len(request))) for name in names}
        cases: dict[str, Callable[[], object]] = {
            name: (lambda n=name: policy.invoke_sync(n, "tools/call", "request", fresh[n]()))
            for name in names
        }
        dumps = FreshPayloads(request, pool_size(_json_len(request)))
        cases[JSON_DUMPS] = lambda: json.dumps(dumps())
        stats = self._measure(cases)
        base = stats[JSON_DUMPS].median_ns
        rows = []
        for name, s in stats.items():
            rows.append([name, fmt_ns(s.median_ns), fmt_ratio(s.median_ns / base)])
            # `interceptors` holds interceptors only (bench/report.py lists its keys).
            into = out["interceptors"] if name != JSON_DUMPS else out.setdefault(JSON_DUMPS, {})
            into[name] = {**s.to_json(), "vs_json_dumps": s.median_ns / base}
        print_table(["interceptor (10 KB request)", "invoke_sync", "vs json.dumps"], rows)
        out["chain"] = self._chain(policy, requests)
        self.results["shipped"] = out

    def _chain(self, policy: PolicySet, requests: dict[str, Any]) -> dict[str, Any]:
        """The whole chain and pii-redactor alone at each size, each against `json.dumps`
        of the same payload, measured in the same interleaved rounds."""
        loop = asyncio.new_event_loop()
        connect = InterceptorChain.connect(local={"policies": policy})
        chain = loop.run_until_complete(connect.__aenter__())
        out: dict[str, Any] = {}
        rows = []
        try:
            for label, request in requests.items():
                size = _json_len(request)
                pool = pool_size(size)
                chained, alone, dumps = (FreshPayloads(request, pool) for _ in range(3))

                def run(f: FreshPayloads = chained) -> object:
                    params = ChainExecutionParams(event="tools/call", phase="request", payload=f())
                    return loop.run_until_complete(chain.execute(params, side="sending"))

                result: Any = run()
                if result.status != "success":
                    raise SystemExit(f"the shipped chain should pass the request: {result.status}")
                redacted = policy.invoke_sync(PII, "tools/call", "request", alone())
                info = redacted.info or {}
                # Pattern hits, and values the field rules (`$..email` ...) replaced.
                hits = sum((info.get("patterns") or {}).values()) + sum(
                    n
                    for code, n in (info.get("changes") or {}).items()
                    if code in ("email-field", "ssn-field", "card-number")
                )
                stats = self._measure(
                    {
                        "chain": run,
                        PII: lambda f=alone: policy.invoke_sync(PII, "tools/call", "request", f()),
                        JSON_DUMPS: lambda f=dumps: json.dumps(f()),
                    }
                )
                base = stats[JSON_DUMPS].median_ns
                # The chain's own figures at the top of the cell, as report.py reads them.
                cell: dict[str, Any] = {
                    "payload_bytes": size,
                    "redactions": hits,
                    **stats["chain"].to_json(),
                }
                for engine, st in stats.items():
                    ratio = st.median_ns / base
                    rows.append(
                        [
                            f"{label} ({size:,} B, {hits} redacted)",
                            engine,
                            fmt_ns(st.median_ns),
                            fmt_ratio(ratio),
                        ]
                    )
                    cell[engine] = {**st.to_json(), "vs_json_dumps": ratio}
                out[label] = cell
        finally:
            loop.run_until_complete(connect.__aexit__(None, None, None))
            loop.close()
        print_table(["request", "what", "median", "vs json.dumps"], rows, right=2)
        return out

    # -- throughput ---------------------------------------------------------------

    def _against_hand(
        self, name: str, patterns: list[str], payload: dict[str, Any], pool: int
    ) -> tuple[dict[str, Any], dict[str, int]]:
        """One `redact $.content[*].text matching` rule against the two hand-written loops,
        all checked to give the same payload and counts first; the stats of each."""
        source = (
            f'mutator {name} "Patterns in text content" {{\n  on tools/call response\n'
            f"  redact $.content[*].text matching {', '.join(patterns)}\n}}\n"
        )
        policy = compile_sources({f"{name}.policy": source})
        hands = {BINDING_LOOP: BindingRedactor(patterns), WRAPPER_LOOP: HandRedactor(patterns)}
        result = policy.invoke_sync(name, "tools/call", "response", payload)
        counts: dict[str, int] = {}
        for label, hand in hands.items():
            expected, counts = hand.payload(payload)
            if result.payload != expected or (result.info or {}).get("patterns") != counts:
                raise SystemExit(f"the {label} disagrees with policyc on `{name}`")
        pools = {label: FreshPayloads(payload, pool) for label in ("policyc", *hands)}
        cases: dict[str, Callable[[], object]] = {
            "policyc": lambda: policy.invoke_sync(
                name, "tools/call", "response", pools["policyc"]()
            )
        }
        for label, hand in hands.items():
            cases[label] = lambda h=hand, f=pools[label]: h.payload(f())
        return self._measure(cases), counts

    def throughput(self) -> None:
        names = list(BUILTIN_PATTERNS)
        payload = {
            "content": [{"type": "text", "text": mixed_text(n)} for n in range(1000)],
            "isError": False,
        }
        text_bytes = sum(len(item["text"].encode()) for item in payload["content"])
        stats, counts = self._against_hand("packs", names, payload, 4)
        print(
            f"## Redaction throughput: {len(names)} built-in patterns, 1 MB of mixed text "
            f"({sum(counts.values()):,} hits)\n"
        )
        rows = []
        out: dict[str, Any] = {"text_bytes": text_bytes, "hits": sum(counts.values())}
        base = stats[BINDING_LOOP].median_ns
        for engine, s in stats.items():
            mbps = text_bytes / (s.median_ns / 1e9) / 1e6
            ratio = s.median_ns / base
            rows.append([engine, fmt_ns(s.median_ns), f"{mbps:.1f} MB/s", fmt_ratio(ratio)])
            out[engine] = {**s.to_json(), "mb_per_s": mbps, "ratio_vs_binding_loop": ratio}
        _legacy_keys(out, stats)
        print_table(["engine", "median", "throughput", "vs binding loop"], rows)
        self.results["throughput"] = out

    # -- values ---------------------------------------------------------------------

    def values(self) -> None:
        """Personal data as whole strings: the case where a pattern's context can take
        in the newline that joins the strings of one scan."""
        payload = {
            "content": [{"type": "text", "text": row_value(n)} for n in range(400)],
            "isError": False,
        }
        size = _json_len(payload)
        stats, counts = self._against_hand("rows", list(PII_NAMES), payload, pool_size(size))
        print(f"## Whole-string values: {len(payload['content'])} rows, {size:,} JSON bytes\n")
        rows = []
        out: dict[str, Any] = {"payload_bytes": size, "hits": sum(counts.values())}
        for engine, s in stats.items():
            ratio = s.median_ns / stats[BINDING_LOOP].median_ns
            rows.append([engine, fmt_ns(s.median_ns), fmt_ratio(ratio)])
            out[engine] = {**s.to_json(), "ratio_vs_binding_loop": ratio}
        _legacy_keys(out, stats)
        print_table(["engine", "median", "vs binding loop"], rows)
        self.results["values"] = out

    # -- lines --------------------------------------------------------------------

    def lines(self) -> None:
        """Strings holding newlines (logs, files, chat) are scanned one by one with the
        patterns as written; a Set pass first says which checked passes can find
        anything. The baseline, in the same run, is the same matcher without it."""
        with_set, without = _pii_matcher(), _pii_matcher()
        for ascii_only in (False, True):
            programs = without._scan_programs(False, ascii_only)
            without._programs[(False, ascii_only)] = replace(programs, alone_set=None)
        rows = []
        self.results["lines"] = {}
        for label, texts in (
            ("prose, every kind of PII", [_prose_lines(n) for n in range(100)]),
            ("log lines, e-mails and IPs", [_log_lines(n) for n in range(100)]),
        ):
            for text in texts:
                if list(with_set.hits(text)) != list(without.hits(text)):
                    raise SystemExit("the Set pass changed a string's hits")
            stats = self._measure(
                {
                    "Set pass first": lambda ts=texts: [list(with_set.hits(t)) for t in ts],
                    "every pass": lambda ts=texts: [list(without.hits(t)) for t in ts],
                }
            )
            size = sum(len(text.encode()) for text in texts)
            out: dict[str, Any] = {"text_bytes": size}
            for engine, st in stats.items():
                ratio = st.median_ns / stats["every pass"].median_ns
                rows.append(
                    [f"{label} ({size:,} B)", engine, fmt_ns(st.median_ns), fmt_ratio(ratio)]
                )
                out[engine] = {**st.to_json(), "ratio_vs_every_pass": ratio}
            self.results["lines"][label] = out
        print("## Multi-line strings: 100 texts each, the PII patterns\n")
        print_table(["texts", "TextMatcher.hits", "median", "vs every pass"], rows)

    # -- redact-rules ---------------------------------------------------------------

    def redact_rules(self) -> None:
        print("## `redact ... matching` rules on one 10 KB field\n")
        text = _clean_text(10_000)
        payload = {"name": "search", "arguments": {"query": text}}
        fresh = FreshPayloads(payload, 64)
        out: dict[str, Any] = {}
        rows = []
        base: dict[str, float] = {}
        for n in (10, 100, 1000):
            terms = [rf"\bproject[-_ ]?code[-_ ]?{i}\b" for i in range(n)]
            many = "\n".join(f"  redact $.arguments.query matching /{t}/i" for t in terms)
            one = f"  redact $.arguments.query matching {', '.join(f'/{t}/i' for t in terms)}"
            sets = {
                f"{n} rules": compile_sources({"r.policy": _mutator(many)}),
                f"1 rule, {n} patterns": compile_sources({"r.policy": _mutator(one)}),
            }
            probe = {"name": "search", "arguments": {"query": f"see project-code-{n - 1} now"}}
            for policy in sets.values():
                if not policy.invoke_sync("terms", "tools/call", "request", probe).modified:
                    raise SystemExit("the probe should be redacted")
            cases = {
                label: (lambda p=policy: p.invoke_sync("terms", "tools/call", "request", fresh()))
                for label, p in sets.items()
                for policy in (p,)
            }
            stats = self._measure(cases)
            for label, s in stats.items():
                kind = label.split(" ", 1)[1].replace(str(n), "N")
                base.setdefault(kind, s.median_ns)
                growth = s.median_ns / base[kind]
                rows.append([label, fmt_ns(s.median_ns), fmt_ratio(growth)])
                out.setdefault(str(n), {})[kind] = {**s.to_json(), "growth_vs_10": growth}
        print_table(["policy", "median", "vs 10"], rows)
        self.results["redact_rules"] = out


def _legacy_keys(out: dict[str, Any], stats: dict[str, Any]) -> None:
    """The keys earlier results used (bench/report.py reads them, and the published
    runs have them): the wrapper loop as "hand-written RE2 loop", ratios to it."""
    hand = stats[WRAPPER_LOOP].median_ns
    out["hand-written RE2 loop"] = out[WRAPPER_LOOP]
    for engine, s in stats.items():
        out[engine]["ratio_vs_hand"] = s.median_ns / hand


def _prose_lines(n: int) -> str:
    return "\n".join(mixed_text(n + k) for k in range(3))


def _log_lines(n: int) -> str:
    """About 2 KB of a service log: e-mails and IPv4 addresses, no cards or IBANs."""
    return "\n".join(
        f"2026-12-02T04:{k:02d}:{n % 60:02d}Z INFO session {n * 31 + k} user "
        f"user{k}.{n}@example.com signed in from 10.{n % 200}.{k}.{(n + k) % 250}"
        for k in range(24)
    )


def _pii_matcher() -> Any:
    """The `TextMatcher` of a `redact ... matching` rule over the PII patterns."""
    rule = f"  redact $.arguments matching {', '.join(PII_NAMES)}\n"
    source = f"mutator m {{\n  on tools/call request\n{rule}}}\n"
    (mutation,) = compile_sources({"m.policy": source}).interceptors["m"].mutations
    assert mutation.rewrite is not None
    return mutation.rewrite.matcher


def _check(name: str) -> Any:
    check = BUILTIN_PATTERNS[name].check
    return CANDIDATE_CHECKS[check] if check else None


def _mutator(rules: str) -> str:
    return f'mutator terms "Code names" {{\n  on tools/call request\n{rules}\n}}\n'


class HandRedactor:
    """What one ``redact ... matching`` rule does, written directly against re2.

    Unchecked patterns share one alternation with a named group each; every
    checked pattern, and every one with a ``value`` group, gets a pass of its
    own (a skipped candidate must not hide another pattern's match); hits
    merge leftmost first, earlier pattern first. One call per string, through
    re2's public API, as a developer would write it.
    """

    def __init__(self, names: list[str]) -> None:
        options = re2.Options()
        options.max_mem = 64 << 20
        self.names = names
        sources = [BUILTIN_PATTERNS[n].source for n in names]
        values = [re2.compile(src, options).groupindex.get("value", 0) for src in sources]
        plain = [
            i for i, n in enumerate(names) if BUILTIN_PATTERNS[n].check is None and not values[i]
        ]
        self.plain = plain
        self.joined = re2.compile("|".join(f"(?P<p{i}>{sources[i]})" for i in plain), options)
        # Checked patterns and those with a value group: a pass each, the
        # value group (or the whole match) being the hit.
        self.alone = [
            (i, re2.compile(sources[i], options), values[i], _check(names[i]))
            for i in range(len(names))
            if i not in plain
        ]

    def text(self, text: str, counts: dict[str, int]) -> str:
        hits = [
            (m.start(), int(m.lastgroup[1:]), m.end())
            for m in self.joined.finditer(text)
            if m.start() != m.end()
        ]
        for i, regex, group, check in self.alone:
            for m in regex.finditer(text):
                start, end = m.span(group)
                if start != end and (check is None or check(text[start:end])):
                    hits.append((start, i, end))
        if not hits:
            return text
        pieces = []
        last = 0
        for start, i, end in sorted(hits):
            if start < last:
                continue
            name = self.names[i]
            pieces += [text[last:start], f"[REDACTED:{name}]"]
            counts[name] = counts.get(name, 0) + 1
            last = end
        pieces.append(text[last:])
        return "".join(pieces)

    def payload(self, payload: dict[str, Any]) -> tuple[dict[str, Any], dict[str, int]]:
        counts: dict[str, int] = {}
        content = []
        for item in payload["content"]:
            text = self.text(item["text"], counts)
            content.append(item if text is item["text"] else {**item, "text": text})
        return {**payload, "content": content}, counts


class BindingRedactor(HandRedactor):
    """`HandRedactor` calling RE2 as policyc does: the compiled object under the
    wrapper (`matchers.binding`), one `Match` call per match on the string's UTF-8,
    no per-match Python object from the wrapper, and programs compiled in Latin-1
    for an ASCII-only string. The fair baseline for policyc's own loop; each string
    is still scanned alone."""

    def __init__(self, names: list[str]) -> None:
        super().__init__(names)
        self.plain_groups = [self.joined.groupindex[f"p{i}"] for i in self.plain]

        def ascii_program(regex: Any) -> Any:
            return binding(compiled(regex.pattern, latin1=True))

        # By whether the string is ASCII-only: the joined pass and the others.
        self.programs = {
            False: (binding(self.joined), [(i, binding(r), g, c) for i, r, g, c in self.alone]),
            True: (
                ascii_program(self.joined),
                [(i, ascii_program(r), g, c) for i, r, g, c in self.alone],
            ),
        }

    def text(self, text: str, counts: dict[str, int]) -> str:
        data = text.encode("utf-8")
        raw_joined, raw_alone = self.programs[len(data) == len(text)]
        hits: list[tuple[int, int, int]] = []
        for spans in _binding_matches(raw_joined, data):
            start, end = spans[0]
            if start != end:
                for k, group in enumerate(self.plain_groups):
                    if spans[group][0] >= 0:
                        hits.append((start, self.plain[k], end))
                        break
        for i, regex, group, check in raw_alone:
            for spans in _binding_matches(regex, data):
                start, end = spans[group]
                if start != end and (check is None or check(data[start:end].decode())):
                    hits.append((start, i, end))
        if not hits:
            return text
        pieces = []
        last = 0
        for start, i, end in sorted(hits):
            if start < last:
                continue
            name = self.names[i]
            pieces += [data[last:start].decode(), f"[REDACTED:{name}]"]
            counts[name] = counts.get(name, 0) + 1
            last = end
        pieces.append(data[last:].decode())
        return "".join(pieces)


def _binding_matches(compiled: Any, data: bytes) -> list[Any]:
    """Every match's group spans; an empty match steps over one UTF-8 character."""
    out = []
    pos = 0
    end = len(data)
    while pos <= end:
        spans = compiled.Match(UNANCHORED, data, pos, end)
        found, stop = spans[0]
        if stop < 0:
            break
        out.append(spans)
        if stop > found:
            pos = stop
        elif stop == end:
            break
        else:
            lead = data[stop]
            pos = stop + (1 if lead < 0xC0 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4)
    return out


SECTIONS = {
    "shipped": "shipped",
    "throughput": "throughput",
    "values": "values",
    "lines": "lines",
    "redact-rules": "redact_rules",
}


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--quick", action="store_true", help="shorter time budget per figure")
    options.add_argument("--json", help="where to write the results (default bench/results/)")
    options.add_argument("--only", help=f"comma-separated sections of {','.join(SECTIONS)}")
    options.add_argument("--policies", default=str(POLICIES), help="the set `shipped` runs")
    args = options.parse_args()
    chosen = args.only.split(",") if args.only else list(SECTIONS)
    unknown = set(chosen) - set(SECTIONS)
    if unknown:
        sys.exit(f"unknown section(s): {', '.join(sorted(unknown))}")
    info = machine()
    print_machine(info)
    bench = HotPath(budget_s=0.3 if args.quick else 1.5, policies=Path(args.policies))
    for section in chosen:
        getattr(bench, SECTIONS[section])()
    path = write_results("hotpath", {"machine": info, **bench.results}, args.json)
    print(f"results written to {path}")


if __name__ == "__main__":
    main()

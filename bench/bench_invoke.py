"""Invoke latency of compiled policies, against hand-written Python, Cedar and Invariant.

    python bench/bench_invoke.py             # full run: prints tables, writes JSON
    python bench/bench_invoke.py --quick     # shorter time budget per figure
    python bench/bench_invoke.py --json out.json
    python bench/bench_invoke.py --only redact,validate,common,bounds,regex

Sections (each a table of medians and ratios, all measured in this run):

* ``redact``: the PII redactor (a copy of ``policies/pii.policy``) on ~10 KB and
  ~1 MB ``tools/call`` requests and responses, against a hand-written Python
  function doing the same work: the same RE2 regexes and candidate checks
  (Luhn, IBAN), a copy-on-write dict walk, no policy machinery. The script
  first checks that both produce the same payload.
* ``validate``: the shipped tool guard and sampling guard (copies of
  ``policies/tool-guard.policy`` and ``policies/sampling-guard.policy``)
  against hand-written equivalents; same messages are checked first.
* ``common``: the three checks every engine here can express (tool deny list
  with a glob, token budget, model allowlist), in policyc, by hand, in Cedar
  (``cedarpy``, pre-parsed ``PolicySet`` and ``Entities``) and in Invariant
  (``invariant-ai``'s ``LocalPolicy``). Cedar and Invariant cannot redact, so
  they appear only here. Decisions are cross-checked on allow and deny cases.
* ``bounds``: policyc's payload bounds check alone (size, depth, non-finite
  numbers), which each message pays once before any rule runs.
* ``regex``: a validator with 10, 100 and 1,000 ``matches`` rules on one field,
  against the same regexes looped by hand, one RE2 alternation, and one
  ``re2.Set``: how per-invoke cost grows with the number of rules.

cedarpy and invariant-ai are optional (``pip install -e '.[bench]'``); a missing
one is skipped with a note. Not a test: no figure is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import re2
from _common import (
    FreshPayloads,
    Stats,
    fmt_ns,
    fmt_ratio,
    machine,
    measure,
    pool_size,
    print_machine,
    print_table,
)
from _common import write_results as _write_results

from policy_engine.compiler import PolicySet, compile_sources
from policy_engine.compiler.bounds import Limits, check_bounds
from policy_engine.compiler.candidate_checks import CANDIDATE_CHECKS
from policy_engine.language.builtin_patterns import BUILTIN_PATTERNS

# --------------------------------------------------------------------------- policies
# Copies of the shipped files (so the figures do not move when someone edits
# them); the hand-written baselines below implement exactly these rules.

PII_POLICY = """
mutator pii-redactor "Redacts personal data from tool traffic" version "1.0.0" {
  on tools/call, llm/completion request priority -50000
  on tools/call, llm/completion response priority 50000
  redact $..email with "[EMAIL]"
  redact $..ssn with "[SSN]"
  mask $..card_number keep 4
  redact $.arguments matching EMAIL, SSN, CREDIT_CARD, PHONE, IBAN
  redact $.content[*].text matching EMAIL, SSN, CREDIT_CARD, PHONE, IBAN
  redact $.messages[*].content matching EMAIL, SSN, CREDIT_CARD
}
"""

TOOL_GUARD_POLICY = """
validator tool-guard "Blocks dangerous tools and suspicious arguments" version "1.0.0" {
  on tools/call request
  deny tools ["shell_exec", "drop_database", "*_unsafe"]
    "tool is blocked by policy" code blocked-tool
  deny if any $.arguments.* matches /(?i)\\b(drop|truncate)\\s+table\\b/
    "destructive SQL in arguments" code destructive-sql
  warn if any $.arguments.* matches /(?i)\\bdelete\\s+from\\b/
    "DELETE statement in {path}" code sql-delete
  limit size 256 kb "tool call arguments are too large" code oversized-call
}
"""

SAMPLING_GUARD_POLICY = """
validator sampling-guard "Token budget and model allowlist for sampling" version "1.0.0" {
  on sampling/createMessage request
  param maxTokens: int = 4096
  deny if $.maxTokens > param.maxTokens "maxTokens over budget" code token-budget
  allow models ["claude-*", "gpt-4o*"] "model not allowed" code model-allowlist
  info if missing $.systemPrompt "no system prompt" code no-system-prompt
}
"""

# The checks Cedar and Invariant can express too: no regex over arguments, no
# size limit, no info rule.
COMMON_POLICY = """
validator tool-deny "Tool deny list" {
  on tools/call request
  deny tools ["shell_exec", "drop_database", "*_unsafe"]
    "tool is blocked by policy" code blocked-tool
}
validator sampling-limits "Token budget and model allowlist" {
  on sampling/createMessage request
  param maxTokens: int = 4096
  deny if $.maxTokens > param.maxTokens "maxTokens over budget" code token-budget
  allow models ["claude-*", "gpt-4o*"] "model not allowed" code model-allowlist
}
"""

CEDAR_POLICY = """
permit (principal, action, resource);

@id("blocked-tool")
forbid (principal, action == Action::"tools/call", resource)
when { ["shell_exec", "drop_database"].contains(context.tool) || context.tool like "*_unsafe" };

@id("token-budget")
forbid (principal, action == Action::"sampling/createMessage", resource)
when { context.maxTokens > 4096 };

@id("model-allowlist")
forbid (principal, action == Action::"sampling/createMessage", resource)
when { context has model && !(context.model like "claude-*" || context.model like "gpt-4o*") };
"""

INVARIANT_TOOL_POLICY = """
raise "tool is blocked by policy" if:
    (call: ToolCall)
    call.function.name in ["shell_exec", "drop_database"]

raise "tool is blocked by policy" if:
    (call: ToolCall)
    match("^.*_unsafe$", call.function.name)
"""

# No rule binds a message: a rule over `(msg: Message)` runs once per message and
# hits Invariant's evaluation cap (INVARIANT_MAX_ITERATIONS, 100) on long traces.
INVARIANT_SAMPLING_POLICY = """
raise "maxTokens over budget" if:
    input.maxTokens > input.budget

raise "model not allowed" if:
    (model: str) in input.models
    not match("^(?:claude-.*|gpt-4o.*)$", model)
"""

# --------------------------------------------------------------------------- payloads

_CARDS = ("4111111111111111", "5555 5555 5555 4444", "4012-8888-8888-1881", "378282246310005")
_IBANS = ("GB82 WEST 1234 5698 7654 32", "DE89370400440532013000")
_PHONES = ("+14155550100", "(415) 555-0132", "+44 20 7946 0958")
_FILLER = (
    "The shipment left the Lyon warehouse on Tuesday and is expected at the "
    "customer's site before the end of the month, pending customs clearance. "
)


def _ssn(n: int) -> str:
    return f"{100 + n % 500:03d}-{10 + n % 80:02d}-{1000 + n % 8000:04d}"


def _email(n: int) -> str:
    return f"customer.{n}@example.com"


def paragraph(n: int) -> str:
    """A few sentences of prose; most carry one or two pieces of personal data."""
    sentences = [
        _FILLER,
        f"Please reach out to {_email(n)} if the invoice for order #{40000 + n} is pending. ",
        f"Customer SSN on file: {_ssn(n)}; verify it before any change to the account. ",
        f"Card {_CARDS[n % len(_CARDS)]} was charged twice for order #{50000 + n}. ",
        f"Call back at {_PHONES[n % len(_PHONES)]} after 5 pm, or write to billing. ",
        f"Refunds go to IBAN {_IBANS[n % len(_IBANS)]} once approved by finance. ",
        _FILLER,
    ]
    return "".join(sentences[i] for i in range(len(sentences)) if (n + i) % 3 != 1)


def _record(n: int) -> dict[str, Any]:
    return {
        "id": n,
        "customer": {
            "name": f"Customer {n}",
            "email": _email(n),
            "ssn": _ssn(n),
            "card_number": _CARDS[n % len(_CARDS)].replace(" ", "").replace("-", ""),
            "address": {"city": "Lyon", "zip": f"{69000 + n % 10}", "country": "FR"},
        },
        "history": [
            {"ts": f"2025-01-{1 + n % 28:02d}T10:00:00Z", "note": paragraph(n)},
            {"ts": f"2025-02-{1 + n % 28:02d}T11:30:00Z", "note": paragraph(n + 1)},
        ],
        "tags": ["vip" if n % 7 == 0 else "standard", f"segment-{n % 5}"],
        "score": round(0.37 * n, 2),
    }


def _grow(payload: dict[str, Any], target: int, add: Callable[[int], None]) -> dict[str, Any]:
    n = 0
    while len(json.dumps(payload)) < target:
        add(n)
        n += 1
    return payload


def tools_call_request(target: int) -> dict[str, Any]:
    """A CRM bulk update: top-level string arguments plus nested records."""
    payload: dict[str, Any] = {
        "name": "crm_bulk_update",
        "arguments": {
            "sql": "update customers set status = 'active' where region = 'EU'",
            "note": paragraph(0),
            "requester": {"name": "Ops Bot", "email": "ops@example.com"},
            "records": [],
            "options": {"dry_run": False, "batch": 50},
        },
    }
    records = payload["arguments"]["records"]
    return _grow(payload, target, lambda n: records.append(_record(n + 1)))


def tools_call_response(target: int) -> dict[str, Any]:
    """A tool result: many text content items, some annotated."""
    payload: dict[str, Any] = {"content": [], "isError": False}
    content = payload["content"]

    def add(n: int) -> None:
        item: dict[str, Any] = {"type": "text", "text": f"Result {n}: " + paragraph(n)}
        if n % 5 == 0:
            item["annotations"] = {"audience": ["user"], "priority": 0.5}
        content.append(item)

    return _grow(payload, target, add)


def sampling_request(target: int, model: str = "claude-sonnet-4", max_tokens: int = 2048) -> Any:
    payload: dict[str, Any] = {
        "messages": [],
        "systemPrompt": "You are a careful assistant.",
        "maxTokens": max_tokens,
        "modelPreferences": {"hints": [{"name": model}], "intelligencePriority": 0.8},
        "includeContext": "none",
    }
    messages = payload["messages"]

    def add(n: int) -> None:
        role = "user" if n % 2 == 0 else "assistant"
        messages.append({"role": role, "content": {"type": "text", "text": paragraph(n)}})

    return _grow(payload, target, add)


def _peer_variant(payload: dict[str, Any], kind: str, decision: str) -> dict[str, Any]:
    """The allow payload as generated, or the same body made to be denied."""
    if decision == "allow":
        return payload
    if kind == "tools/call request":
        return {**payload, "name": "shell_exec"}
    return {**payload, "maxTokens": 100_000}


# --------------------------------------------------------------------------- by hand
# Plain Python doing what the policies do: re2 for text, hand-written walks.


class _Patterns:
    """The regexes of a rule, as policyc runs them: one alternation of the plain
    patterns (a named group each), and a pass of its own for each pattern with
    a candidate check or a ``value`` group (whose span is then the hit)."""

    def __init__(self, names: tuple[str, ...]) -> None:
        options = re2.Options()
        options.max_mem = 64 << 20
        self.names = names
        sources = [BUILTIN_PATTERNS[n].source for n in names]
        values = [re2.compile(src, options).groupindex.get("value", 0) for src in sources]
        checks = [CANDIDATE_CHECKS[c] if (c := BUILTIN_PATTERNS[n].check) else None for n in names]
        plain = [i for i in range(len(names)) if checks[i] is None and not values[i]]
        body = "|".join(f"(?P<p{i}>{sources[i]})" for i in plain)
        self.joined = re2.compile(body, options) if plain else None
        self.alone = [
            (i, re2.compile(sources[i], options), values[i], checks[i])
            for i in range(len(names))
            if i not in plain
        ]

    def hits(self, text: str) -> list[tuple[int, int, int]]:
        found = []
        if self.joined is not None:
            for m in self.joined.finditer(text):
                if m.start() != m.end():
                    found.append((m.start(), int(m.lastgroup[1:]), m.end()))
        for i, regex, group, check in self.alone:
            for m in regex.finditer(text):
                start, end = m.span(group)
                if start != end and (check is None or check(text[start:end])):
                    found.append((start, i, end))
        return sorted(found)


_PII_TEXT = _Patterns(("EMAIL", "SSN", "CREDIT_CARD", "PHONE", "IBAN"))
_PII_MSG = _Patterns(("EMAIL", "SSN", "CREDIT_CARD"))


def _scrub(text: str, patterns: _Patterns, counts: dict[str, int]) -> str:
    pieces: list[str] = []
    last = 0
    for start, i, end in patterns.hits(text):
        if start < last:
            continue
        name = patterns.names[i]
        pieces.append(text[last:start])
        pieces.append(f"[REDACTED:{name}]")
        counts[name] = counts.get(name, 0) + 1
        last = end
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


def _scrub_all(value: Any, patterns: _Patterns, counts: dict[str, int]) -> Any:
    """Every string under ``value`` scrubbed; containers copied only where something changed."""
    if isinstance(value, str):
        return _scrub(value, patterns, counts)
    if isinstance(value, dict):
        out = {k: _scrub_all(v, patterns, counts) for k, v in value.items()}
        return out if any(out[k] is not value[k] for k in value) else value
    if isinstance(value, list):
        items = [_scrub_all(v, patterns, counts) for v in value]
        return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
    return value


def _mask_card(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    hidden = len(text) - 4
    return "*" * hidden + text[-4:] if hidden > 0 else text


def _by_key(value: Any) -> Any:
    """``$..email``, ``$..ssn`` and ``$..card_number`` in one copy-on-write walk."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        changed = False
        for key, item in value.items():
            if key == "email":
                new: Any = "[EMAIL]"
            elif key == "ssn":
                new = "[SSN]"
            elif key == "card_number":
                new = _mask_card(item)
            else:
                new = _by_key(item)
                changed = changed or new is not item
                out[key] = new
                continue
            if type(new) is type(item) and new == item:
                new = item
            else:
                changed = True
            out[key] = new
        return out if changed else value
    if isinstance(value, list):
        items = [_by_key(v) for v in value]
        return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
    return value


def _replace(out: dict[str, Any], original: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    """``out`` with ``key`` set, copying it first if it is still the caller's dict."""
    if out is original:
        out = dict(original)
    out[key] = value
    return out


def hand_pii(payload: dict[str, Any]) -> tuple[bool, Any, dict[str, int]]:
    """What pii-redactor does: key redactions, then patterns in arguments, content, messages."""
    counts: dict[str, int] = {}
    out = _by_key(payload)
    if "arguments" in out:
        args = _scrub_all(out["arguments"], _PII_TEXT, counts)
        if args is not out["arguments"]:
            out = _replace(out, payload, "arguments", args)
    content = out.get("content")
    if isinstance(content, list):
        items = []
        for item in content:
            if isinstance(item, dict) and isinstance(item.get("text"), str):
                text = _scrub(item["text"], _PII_TEXT, counts)
                if text is not item["text"]:
                    item = {**item, "text": text}
            items.append(item)
        if any(a is not b for a, b in zip(items, content, strict=True)):
            out = _replace(out, payload, "content", items)
    messages = out.get("messages")
    if isinstance(messages, list):
        new_messages = []
        for message in messages:
            if isinstance(message, dict) and "content" in message:
                body = _scrub_all(message["content"], _PII_MSG, counts)
                if body is not message["content"]:
                    message = {**message, "content": body}
            new_messages.append(message)
        if any(a is not b for a, b in zip(new_messages, messages, strict=True)):
            out = _replace(out, payload, "messages", new_messages)
    return out is not payload, out, counts


_DESTRUCTIVE = re2.compile(r"(?i)\b(drop|truncate)\s+table\b")
_DELETE = re2.compile(r"(?i)\bdelete\s+from\b")
Message = tuple[str, str]  # (severity, text)


def _tool_blocked(name: Any) -> bool:
    return isinstance(name, str) and (
        name in ("shell_exec", "drop_database") or name.endswith("_unsafe")
    )


def _models_allowed(payload: dict[str, Any]) -> bool:
    prefs = payload.get("modelPreferences")
    hints = prefs.get("hints") if isinstance(prefs, dict) else None
    for hint in hints if isinstance(hints, list) else ():
        if isinstance(hint, dict) and "name" in hint:
            name = hint["name"]
            if not (isinstance(name, str) and name.startswith(("claude-", "gpt-4o"))):
                return False
    return True


def _over_budget(payload: dict[str, Any], budget: int = 4096) -> bool:
    tokens = payload.get("maxTokens")
    return isinstance(tokens, int | float) and not isinstance(tokens, bool) and tokens > budget


def hand_tool_guard(payload: dict[str, Any]) -> list[Message]:
    out: list[Message] = []
    if _tool_blocked(payload.get("name")):
        out.append(("error", "tool is blocked by policy"))
    args = payload.get("arguments")
    items = list(args.items()) if isinstance(args, dict) else []
    for _, value in items:
        if isinstance(value, str) and _DESTRUCTIVE.search(value):
            out.append(("error", "destructive SQL in arguments"))
            break
    for key, value in items:
        if isinstance(value, str) and _DELETE.search(value):
            out.append(("warn", f"DELETE statement in arguments.{key}"))
            break
    size = len(json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode())
    if size > 256 * 1024:
        out.append(("error", "tool call arguments are too large"))
    return out


def hand_sampling_guard(payload: dict[str, Any]) -> list[Message]:
    out: list[Message] = []
    if _over_budget(payload):
        out.append(("error", "maxTokens over budget"))
    if not _models_allowed(payload):
        out.append(("error", "model not allowed"))
    if "systemPrompt" not in payload:
        out.append(("info", "no system prompt"))
    return out


def hand_common_tool(payload: dict[str, Any]) -> list[Message]:
    return [("error", "tool is blocked by policy")] if _tool_blocked(payload.get("name")) else []


def hand_common_sampling(payload: dict[str, Any]) -> list[Message]:
    out: list[Message] = []
    if _over_budget(payload):
        out.append(("error", "maxTokens over budget"))
    if not _models_allowed(payload):
        out.append(("error", "model not allowed"))
    return out


# --------------------------------------------------------------------------- engines


def policyc_messages(result: Any) -> list[Message]:
    return [(m.severity, m.message) for m in result.messages or ()]


class Cedar:
    """Cedar via cedarpy: policies and (empty) entities parsed once, reused per call.

    The glue pulls out only the fields the policies read (tool name, maxTokens,
    model hint names) into the request context; the rest of the payload never
    reaches Cedar. Cedar has no quantifier over a set with ``like``, so the
    model allowlist is one request per hint (``is_authorized_batch``).
    """

    def __init__(self, cedarpy: Any) -> None:
        self.cedarpy = cedarpy
        self.policies = cedarpy.PolicySet.from_str(CEDAR_POLICY)
        self.entities = cedarpy.Entities.from_json_str("[]")

    def _request(self, action: str, context: dict[str, Any]) -> dict[str, Any]:
        return {
            "principal": 'Client::"bench"',
            "action": f'Action::"{action}"',
            "resource": 'Server::"bench"',
            "context": context,
        }

    def tools_call(self, payload: dict[str, Any]) -> bool:
        name = payload.get("name")
        request = self._request("tools/call", {"tool": name if isinstance(name, str) else ""})
        return bool(self.cedarpy.is_authorized(request, self.policies, self.entities).allowed)

    def sampling(self, payload: dict[str, Any]) -> bool:
        tokens = payload.get("maxTokens")
        base = {"maxTokens": int(tokens) if isinstance(tokens, int | float) else 0}
        prefs = payload.get("modelPreferences")
        hints = prefs.get("hints") if isinstance(prefs, dict) else None
        names = [h["name"] for h in hints or () if isinstance(h, dict) and "name" in h]
        contexts = [{**base, "model": str(n)} for n in names] or [base]
        requests = [self._request("sampling/createMessage", c) for c in contexts]
        results = self.cedarpy.is_authorized_batch(requests, self.policies, self.entities)
        return all(r.allowed for r in results)


class Invariant:
    """Invariant's LocalPolicy on an agent trace built from the MCP payload.

    ``full``: the trace carries the payload (the tool call with its arguments;
    the sampling messages as text), which is how Invariant is meant to be fed.
    ``fields``: the trace is a minimal stub and only the fields the rules read
    go in as policy parameters, the same diet Cedar gets. One event loop is
    reused for every call (``LocalPolicy.analyze`` would start a new one).
    """

    def __init__(self, local_policy: Any) -> None:
        self.tool = local_policy.from_string(INVARIANT_TOOL_POLICY)
        self.sampling_policy = local_policy.from_string(INVARIANT_SAMPLING_POLICY)
        self.loop = asyncio.new_event_loop()

    def close(self) -> None:
        self.loop.close()

    def _run(self, policy: Any, trace: list[dict[str, Any]], **params: Any) -> bool:
        result = self.loop.run_until_complete(policy.a_analyze(trace, **params))
        return not result.errors

    def tools_call(self, payload: dict[str, Any], full: bool) -> bool:
        call = {
            "id": "1",
            "type": "function",
            "function": {
                "name": payload.get("name"),
                "arguments": payload.get("arguments", {}) if full else {},
            },
        }
        trace = [{"role": "assistant", "content": None, "tool_calls": [call]}]
        return self._run(self.tool, trace)

    def sampling(self, payload: dict[str, Any], full: bool) -> bool:
        if full:
            trace = [
                {"role": m.get("role", "user"), "content": _message_text(m.get("content"))}
                for m in payload.get("messages", ())
            ] or [{"role": "user", "content": ""}]
        else:
            trace = [{"role": "user", "content": ""}]
        prefs = payload.get("modelPreferences")
        hints = prefs.get("hints") if isinstance(prefs, dict) else None
        models = [h["name"] for h in hints or () if isinstance(h, dict) and "name" in h]
        return self._run(
            self.sampling_policy,
            trace,
            maxTokens=payload.get("maxTokens", 0),
            budget=4096,
            models=models,
        )


def _message_text(content: Any) -> str:
    if isinstance(content, dict):
        return str(content.get("text", ""))
    if isinstance(content, list):
        return "".join(_message_text(c) for c in content)
    return str(content or "")


def load_cedar() -> Cedar | None:
    try:
        import cedarpy
    except ImportError:
        print("note: cedarpy is not installed; Cedar is skipped (pip install -e '.[bench]')\n")
        return None
    return Cedar(cedarpy)


def load_invariant() -> Invariant | None:
    try:
        from invariant.analyzer.policy import LocalPolicy
    except ImportError:
        print(
            "note: invariant-ai is not installed; Invariant is skipped "
            "(pip install -e '.[bench]')\n"
        )
        return None
    return Invariant(LocalPolicy)


# --------------------------------------------------------------------------- sections


class Bench:
    def __init__(self, budget_s: float) -> None:
        self.budget_s = budget_s
        self.results: dict[str, Any] = {}
        self.payloads = {
            "10 KB": {
                "tools/call request": tools_call_request(10_000),
                "tools/call response": tools_call_response(10_000),
                "sampling request": sampling_request(10_000),
            },
            "1 MB": {
                "tools/call request": tools_call_request(1_000_000),
                "tools/call response": tools_call_response(1_000_000),
                "sampling request": sampling_request(1_000_000),
            },
        }
        sizes = {
            f"{size} {kind}": len(json.dumps(p))
            for size, group in self.payloads.items()
            for kind, p in group.items()
        }
        self.results["payload_bytes"] = sizes
        print("payloads (JSON bytes): " + ", ".join(f"{k} {v:,}" for k, v in sizes.items()))
        print()

    def _measure(self, cases: dict[str, Callable[[], object]]) -> dict[str, Stats]:
        return measure(cases, budget_s=self.budget_s)

    def fresh(self, payload: Any) -> FreshPayloads:
        """Deep copies of ``payload``, a different one for every timed call.

        One pool per contender: contenders sharing a pool would each take a
        stride of it per round, and a stride that is a multiple of the pool
        size hands one contender the same object round after round.
        """
        return FreshPayloads(payload, pool_size(len(json.dumps(payload))))

    # -- redact ---------------------------------------------------------------

    def redact(self) -> None:
        policy = compile_sources({"pii.policy": PII_POLICY})
        print("## PII redactor (mutator) vs hand-written Python + re2\n")
        rows = []
        out: dict[str, Any] = {}
        for size, group in self.payloads.items():
            for kind in ("tools/call request", "tools/call response"):
                payload = group[kind]
                phase = kind.rsplit(" ", 1)[1]
                result = policy.invoke_sync("pii-redactor", "tools/call", phase, payload)
                modified, expected, counts = hand_pii(payload)
                if result.payload != expected or result.modified != modified:
                    raise SystemExit(f"hand-written redactor disagrees with policyc on {kind}")
                if result.info and result.info.get("patterns") != counts:
                    raise SystemExit(f"pattern counts disagree on {kind}: {result.info}, {counts}")

                fresh = self.fresh(payload)

                def ours(fresh: FreshPayloads = fresh, phase: str = phase) -> object:
                    return policy.invoke_sync("pii-redactor", "tools/call", phase, fresh())

                mine = self.fresh(payload)
                stats = self._measure({"policyc": ours, "hand": lambda f=mine: hand_pii(f())})
                ratio = stats["policyc"].median_ns / stats["hand"].median_ns
                rows.append(
                    [
                        f"{size} {kind}",
                        f"{sum(counts.values()):,}",
                        fmt_ns(stats["policyc"].median_ns),
                        fmt_ns(stats["hand"].median_ns),
                        fmt_ratio(ratio),
                    ]
                )
                out[f"{size} {kind}"] = {
                    "redactions_in_text": sum(counts.values()),
                    "policyc": stats["policyc"].to_json(),
                    "hand": stats["hand"].to_json(),
                    "ratio_policyc_vs_hand": ratio,
                }
        print_table(["payload", "text hits", "policyc", "by hand", "policyc / hand"], rows)
        self.results["redact"] = out

    # -- validate -------------------------------------------------------------

    def validate(self) -> None:
        policy = compile_sources(
            {"tool-guard.policy": TOOL_GUARD_POLICY, "sampling.policy": SAMPLING_GUARD_POLICY}
        )
        print("## Shipped validators vs hand-written Python + re2\n")
        rows = []
        out: dict[str, Any] = {}
        plan = (
            ("tool-guard", "tools/call", "tools/call request", hand_tool_guard),
            ("sampling-guard", "sampling/createMessage", "sampling request", hand_sampling_guard),
        )
        for size, group in self.payloads.items():
            for name, event, kind, hand in plan:
                payload = group[kind]
                result = policy.invoke_sync(name, event, "request", payload)
                if sorted(policyc_messages(result)) != sorted(hand(payload)):
                    raise SystemExit(
                        f"{name} disagrees: {policyc_messages(result)} vs {hand(payload)}"
                    )

                fresh = self.fresh(payload)

                def ours(name: str = name, event: str = event, f: FreshPayloads = fresh) -> object:
                    return policy.invoke_sync(name, event, "request", f())

                mine = self.fresh(payload)
                stats = self._measure({"policyc": ours, "hand": lambda h=hand, f=mine: h(f())})
                ratio = stats["policyc"].median_ns / stats["hand"].median_ns
                verdict = "deny" if any(s == "error" for s, _ in hand(payload)) else "allow"
                rows.append(
                    [
                        name,
                        f"{size} {kind}",
                        verdict,
                        fmt_ns(stats["policyc"].median_ns),
                        fmt_ns(stats["hand"].median_ns),
                        fmt_ratio(ratio),
                    ]
                )
                out[f"{name} {size}"] = {
                    "decision": verdict,
                    "policyc": stats["policyc"].to_json(),
                    "hand": stats["hand"].to_json(),
                    "ratio_policyc_vs_hand": ratio,
                }
        print_table(
            ["validator", "payload", "decision", "policyc", "by hand", "policyc / hand"],
            rows,
            right=3,
        )
        self.results["validate"] = out

    # -- common ---------------------------------------------------------------

    def common(self) -> None:
        policy = compile_sources({"common.policy": COMMON_POLICY})
        cedar = load_cedar()
        invariant = load_invariant()
        self._cross_check(policy, cedar, invariant)
        print("## Tool deny list, token budget, model allowlist: policyc vs Cedar vs Invariant\n")
        rows = []
        out: dict[str, Any] = {}
        for size, group in self.payloads.items():
            for kind, decision in (
                ("tools/call request", "allow"),
                ("tools/call request", "deny"),
                ("sampling request", "allow"),
                ("sampling request", "deny"),
            ):
                payload = _peer_variant(group[kind], kind, decision)
                engines: dict[str, Callable[[Any], object]] = {}
                if kind == "tools/call request":
                    engines["by hand"] = hand_common_tool
                    engines["policyc"] = lambda p: policy.invoke_sync(
                        "tool-deny", "tools/call", "request", p
                    )
                    if cedar is not None:
                        engines["cedar"] = cedar.tools_call
                    if invariant is not None:
                        engines["invariant (fields)"] = lambda p: invariant.tools_call(p, False)
                        engines["invariant (full trace)"] = lambda p: invariant.tools_call(p, True)
                else:
                    engines["by hand"] = hand_common_sampling
                    engines["policyc"] = lambda p: policy.invoke_sync(
                        "sampling-limits", "sampling/createMessage", "request", p
                    )
                    if cedar is not None:
                        engines["cedar"] = cedar.sampling
                    if invariant is not None:
                        engines["invariant (fields)"] = lambda p: invariant.sampling(p, False)
                        engines["invariant (full trace)"] = lambda p: invariant.sampling(p, True)
                # Not an engine: the part of policyc's time spent on the size
                # and depth walk that every invoke does before any rule runs.
                engines["(policyc's bounds check alone)"] = lambda p: check_bounds(
                    p, Limits(), "bench"
                )
                # A pool of copies per contender (see `fresh`).
                cases: dict[str, Callable[[], object]] = {
                    engine: (lambda run=run, f=pool: run(f()))
                    for engine, run in engines.items()
                    for pool in [self.fresh(payload)]
                }
                stats = self._measure(cases)
                hand_ns = stats["by hand"].median_ns
                ours_ns = stats["policyc"].median_ns
                key = f"{size} {kind} ({decision})"
                out[key] = {}
                for engine, s in stats.items():
                    rows.append(
                        [
                            key,
                            engine,
                            fmt_ns(s.median_ns),
                            fmt_ratio(s.median_ns / hand_ns),
                            fmt_ratio(s.median_ns / ours_ns),
                        ]
                    )
                    out[key][engine] = {
                        **s.to_json(),
                        "ratio_vs_hand": s.median_ns / hand_ns,
                        "ratio_vs_policyc": s.median_ns / ours_ns,
                    }
        print_table(["payload", "engine", "median", "vs by hand", "vs policyc"], rows, right=2)
        self.results["common"] = out
        if invariant is not None:
            invariant.close()

    def _cross_check(self, policy: PolicySet, cedar: Cedar | None, inv: Invariant | None) -> None:
        """Every engine must reach the same decision before any of them is timed."""
        tool_cases = [
            {"name": n, "arguments": {"q": "x"}}
            for n in ("search", "shell_exec", "format_disk_unsafe", "drop_database", "unsafe_x")
        ] + [self.payloads["10 KB"]["tools/call request"]]
        sampling_cases = [
            sampling_request(0, "claude-sonnet-4", 100),
            sampling_request(0, "claude-sonnet-4", 100_000),
            sampling_request(0, "llama-3", 100),
            sampling_request(0, "gpt-4o-mini", 5000),
            self.payloads["10 KB"]["sampling request"],
        ]
        for payload in tool_cases:
            expected = not hand_common_tool(payload)
            ours = policy.invoke_sync("tool-deny", "tools/call", "request", payload).valid
            got = {"policyc": ours}
            if cedar is not None:
                got["cedar"] = cedar.tools_call(payload)
            if inv is not None:
                got["invariant"] = inv.tools_call(payload, True)
                got["invariant (fields)"] = inv.tools_call(payload, False)
            if any(v != expected for v in got.values()):
                raise SystemExit(f"decisions differ on {payload.get('name')}: {got}")
        for payload in sampling_cases:
            expected = not hand_common_sampling(payload)
            event = "sampling/createMessage"
            got = {
                "policyc": policy.invoke_sync("sampling-limits", event, "request", payload).valid
            }
            if cedar is not None:
                got["cedar"] = cedar.sampling(payload)
            if inv is not None:
                got["invariant"] = inv.sampling(payload, True)
                got["invariant (fields)"] = inv.sampling(payload, False)
            if any(v != expected for v in got.values()):
                raise SystemExit(f"decisions differ on a sampling request: {got}")

    # -- bounds ---------------------------------------------------------------

    def bounds(self) -> None:
        print("## policyc's payload bounds check alone (paid once per message)\n")
        limits = Limits()
        rows = []
        out: dict[str, Any] = {}
        for size, group in self.payloads.items():
            pools = {kind: self.fresh(payload) for kind, payload in group.items()}
            cases = {
                kind: (lambda f=pool: check_bounds(f(), limits, "bench"))
                for kind, pool in pools.items()
            }
            for kind, s in self._measure(cases).items():
                rows.append([f"{size} {kind}", fmt_ns(s.median_ns)])
                out[f"{size} {kind}"] = s.to_json()
        print_table(["payload", "check_bounds"], rows)
        self.results["bounds"] = out

    # -- regex ----------------------------------------------------------------

    def regex(self, counts: tuple[int, ...]) -> None:
        print("## Regex scaling: N `matches` rules on one field\n")
        out: dict[str, Any] = {}
        rows = []
        base: dict[tuple[str, str], float] = {}
        for label, length in (("1 KB", 1_000), ("32 KB", 32_000)):
            text = _clean_text(length)
            payload = {"name": "search", "arguments": {"query": text}}
            for n in counts:
                patterns = [_term_regex(i) for i in range(n)]
                policy = compile_sources({"terms.policy": _terms_policy(patterns)})
                singles = [re2.compile(f"(?i){p}") for p in patterns]
                options = re2.Options()
                options.max_mem = 64 << 20
                alternation = re2.compile("|".join(f"(?i:{p})" for p in patterns), options)
                pattern_set = re2.Set.SearchSet(options)
                for p in patterns:
                    pattern_set.Add(f"(?i:{p})")
                pattern_set.Compile()
                # The text matches none of the rules (the common case); prove it,
                # and prove the Set is not failing silently: when its DFA runs out
                # of memory, Match returns None, the same as "no match".
                probe = "x " + _term_words(n - 1) + " y"
                if (
                    pattern_set.Match(probe) != [n - 1]
                    or pattern_set.Match(text) is not None
                    or pattern_set.Match(text + " " + probe) != [n - 1]
                ):
                    raise SystemExit("re2.Set did not answer as expected")
                if not policy.invoke_sync("terms", "tools/call", "request", payload).valid:
                    raise SystemExit("the scaling text should match no rule")
                hit = {"name": "search", "arguments": {"query": probe}}
                if policy.invoke_sync("terms", "tools/call", "request", hit).valid:
                    raise SystemExit("the probe should match the last rule")

                absent = self.fresh({"name": "search", "arguments": {}})
                present = self.fresh(payload)
                cases: dict[str, Callable[[], object]] = {
                    "policyc": lambda f=present, ps=policy: ps.invoke_sync(
                        "terms", "tools/call", "request", f()
                    ),
                    # The same invoke with the field absent: no regex runs, so
                    # this is policyc's per-rule cost without any scanning.
                    "policyc, field absent": lambda ps=policy, a=absent: ps.invoke_sync(
                        "terms", "tools/call", "request", a()
                    ),
                    "loop of re2 regexes": lambda t=text, rs=singles: [
                        i for i, r in enumerate(rs) if r.search(t)
                    ],
                    "one re2 alternation": lambda t=text, r=alternation: r.search(t),
                    "re2.Set": lambda t=text, s=pattern_set: s.Match(t),
                }
                stats = self._measure(cases)
                for engine, s in stats.items():
                    base.setdefault((label, engine), s.median_ns)
                    growth = s.median_ns / base[(label, engine)]
                    rows.append(
                        [
                            label,
                            f"{n:,}",
                            engine,
                            fmt_ns(s.median_ns),
                            fmt_ratio(growth),
                            fmt_ns(s.median_ns / n),
                        ]
                    )
                    out.setdefault(label, {}).setdefault(str(n), {})[engine] = {
                        **s.to_json(),
                        "growth_vs_first": growth,
                    }
                set_ns = stats["re2.Set"].median_ns
                out[label][str(n)]["policyc_vs_re2_set"] = stats["policyc"].median_ns / set_ns
        print_table(
            ["field", "rules", "engine", "median", f"vs {counts[0]} rules", "per rule"],
            rows,
            right=3,
        )
        summary = []
        for label in out:
            for n in counts:
                cell = out[label][str(n)]
                summary.append(
                    [
                        label,
                        f"{n:,}",
                        fmt_ratio(cell["policyc"]["median_ns"] / cell["re2.Set"]["median_ns"]),
                        fmt_ratio(
                            cell["policyc"]["median_ns"] / cell["one re2 alternation"]["median_ns"]
                        ),
                    ]
                )
        print_table(["field", "rules", "policyc / re2.Set", "policyc / alternation"], summary)
        self.results["regex"] = out


_WORDS = (
    "harbor", "falcon", "granite", "meadow", "cobalt", "ember", "willow", "quartz",
    "summit", "lagoon", "cedar", "orchid", "tundra", "beacon", "canyon", "zephyr",
)  # fmt: skip


def _term_words(i: int) -> str:
    return f"project {_WORDS[i % 16]} {_WORDS[(i // 16) % 16]} {i}"


def _term_regex(i: int) -> str:
    """A blocked code name, e.g. ``project-harbor-falcon-17``: separators vary."""
    return rf"\bproject[-_ ]?{_WORDS[i % 16]}[-_ ]?{_WORDS[(i // 16) % 16]}[-_ ]?{i}\b"


def _terms_policy(patterns: list[str]) -> str:
    rules = "\n".join(
        f'  deny if $.arguments.query matches /{p}/i "blocked code name {i}" code term-{i}'
        for i, p in enumerate(patterns)
    )
    return f'validator terms "Blocked code names" {{\n  on tools/call request\n{rules}\n}}\n'


def _clean_text(length: int) -> str:
    """Prose that shares words with the patterns but matches none of them."""
    words = [*_WORDS, "project", "the", "of", "and", "report", "quarterly", "status"]
    out: list[str] = []
    n = 0
    while sum(len(w) + 1 for w in out) < length:
        out.append(words[(n * 7) % len(words)])
        n += 1
    return " ".join(out)


def write_results(results: dict[str, Any], explicit: str | None) -> Path:
    return _write_results("invoke", results, explicit)


SECTIONS = ("redact", "validate", "common", "bounds", "regex")


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--quick", action="store_true", help="shorter time budget per figure")
    options.add_argument("--json", help="where to write the results (default bench/results/)")
    options.add_argument("--only", help=f"comma-separated sections of {','.join(SECTIONS)}")
    args = options.parse_args()
    chosen = args.only.split(",") if args.only else list(SECTIONS)
    unknown = set(chosen) - set(SECTIONS)
    if unknown:
        sys.exit(f"unknown section(s): {', '.join(sorted(unknown))}")
    info = machine()
    print_machine(info)
    bench = Bench(budget_s=0.3 if args.quick else 1.5)
    for section in SECTIONS:
        if section in chosen:
            if section == "regex":
                bench.regex((10, 100, 1000))
            else:
                getattr(bench, section)()
    path = write_results({"machine": info, **bench.results}, args.json)
    print(f"results written to {path}")


if __name__ == "__main__":
    main()

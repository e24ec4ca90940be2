"""The optimised plan answers as the reference plan does, for every rule kind, and
a trace observes the optimised plan without changing what it answers.

The reference (`optimize=False`) runs each rule alone, with no shared pattern
scans and no regex probe of the payload: the plain reading of the language. The plan that
`serve` and the gateway run groups rules and skips work the probe rules out;
`policyc test` and `eval --explain` trace that same plan.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from policy_engine.compiler import PolicySet, compile_sources
from policy_engine.compiler.mutators import CompiledMutation
from policy_engine.compiler.trace import Trace
from policy_engine.language import ast

# Every rule kind but the session flow rules (`remember`, `flow`), whose answer
# depends on state kept between invokes: tests/flow compares those.
POLICY = r"""
pattern DIGITS = /[0-9]{3,}/
pattern WORD = /(?i)\bsecret\b/

validator checks {
  on app/run request
  param cap: int = 3
  deny if $.n > param.cap "n too large" code too-large
  warn if any $..* matches EMAIL "e-mail at {path}"
  deny if $.a matches DIGITS or $.a matches WORD "a is sensitive"
  deny if any $.b[*] matches DIGITS "digits in b"
  warn if $.t like "*admin*" "admin-ish"
  deny if "ops" not in context.principal.claims.roles and exists $.root "root needs ops"
}

validator lists {
  on tools/call request
  allow tools ["search", "read_*"]
  deny tools ["read_secrets"] "not that one"
}

validator limits {
  on app/run request
  limit size 2 kb
  limit length $.a 20 "a too long"
  limit count $.b[*] 3
}

mutator scrub {
  on app/run request
  redact $..email
  redact $..ssn with "[SSN]"
  mask $..card keep 2
  hash $..h
  redact $.a matching DIGITS with "#"
  redact $.a matching WORD with "[W]"
  redact $.a matching EMAIL
  redact $..* matching DIGITS, EMAIL with "*"
  set $.d = "x" if exists $.a
  remove $..e
  truncate $..f to 2
  set $.g.h = upper($.t) unless missing $.t
}
"""

KINDS_COVERED = {"check", "list", "limit", "redact", "mask", "hash", "set", "remove", "truncate"}

KEYS = st.sampled_from(["a", "b", "n", "t", "e", "f", "h", "d", "email", "ssn", "card", "root"])
TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=12) | st.sampled_from(
    [
        "bob@example.com",
        "a secret here",
        "call 4155550100",
        "123",
        "admin panel",
        "[REDACTED]",
        "",
    ]
)
SCALARS = st.none() | st.booleans() | st.integers(-10, 10**6) | TEXT
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=5),
    max_leaves=20,
)
PAYLOADS = st.dictionaries(KEYS, JSON, max_size=6)
CALLS = st.fixed_dictionaries(
    {"name": st.sampled_from(["search", "read_x", "read_secrets", "shell", "readme"])}
)
CONTEXTS = st.sampled_from(
    [None, {"principal": {"type": "user", "id": "u", "claims": {"roles": ["ops"]}}}]
)


@cache
def plans() -> tuple[PolicySet, PolicySet]:
    sources = {"plans.policy": POLICY}
    return compile_sources(sources), compile_sources(sources, optimize=False)


def answer(
    policies: PolicySet,
    name: str,
    event: str,
    payload: Any,
    context: Any,
    trace: Trace | None = None,
) -> str:
    """Everything an invoke answers but its duration, type-strict."""
    try:
        result = policies.invoke_sync(
            name, event, "request", copy.deepcopy(payload), context=context, trace=trace
        )
    except Exception as exc:  # the same refusal is part of the same answer
        return f"{type(exc).__name__}: {exc}"
    wire = result.to_wire()
    wire.pop("durationMs", None)
    return json.dumps(wire, sort_keys=True, ensure_ascii=False)


def test_the_policy_covers_every_rule_kind_but_flow_rules() -> None:
    optimised, _ = plans()
    kinds = {
        ast.RULE_KINDS[type(rule)]
        for compiled in optimised.interceptors.values()
        for rule in compiled.resolved.rules
    }
    assert kinds == KINDS_COVERED
    assert set(ast.RULE_KINDS.values()) - kinds == {"remember", "flow"}


def test_the_optimised_plan_groups_rules_and_the_reference_does_not() -> None:
    optimised, reference = plans()
    scrub, plain = optimised.interceptors["scrub"], reference.interceptors["scrub"]
    assert len(scrub.plan) < len(scrub.mutations)
    assert plain.plan == plain.mutations
    assert all(m.probe is None for m in plain.mutations)
    assert any(m.probe is not None for m in scrub.mutations)


@settings(max_examples=300, deadline=None)
@given(payload=PAYLOADS, context=CONTEXTS)
def test_optimised_and_reference_plans_answer_alike(payload: Any, context: Any) -> None:
    optimised, reference = plans()
    for name in ("checks", "limits", "scrub"):
        fast = answer(optimised, name, "app/run", payload, context)
        assert fast == answer(reference, name, "app/run", payload, context), name


@settings(max_examples=100, deadline=None)
@given(call=CALLS)
def test_list_rules_answer_alike(call: dict[str, Any]) -> None:
    optimised, reference = plans()
    fast = answer(optimised, "lists", "tools/call", call, None)
    assert fast == answer(reference, "lists", "tools/call", call, None)


@settings(max_examples=300, deadline=None)
@given(payload=PAYLOADS, context=CONTEXTS)
def test_a_trace_observes_the_production_plan_without_changing_its_answer(
    payload: Any, context: Any
) -> None:
    optimised, reference = plans()
    for name in ("checks", "limits", "scrub"):
        traced, plain_trace = Trace(), Trace()
        fast = answer(optimised, name, "app/run", payload, context, traced)
        assert fast == answer(optimised, name, "app/run", payload, context), name
        assert fast == answer(reference, name, "app/run", payload, context, plain_trace)
        # The same rules are evaluated and report the same changes, rule by rule.
        assert [ref.code for ref in traced.evaluated] == [ref.code for ref in plain_trace.evaluated]
        assert _events(traced) == _events(plain_trace)


def _events(trace: Trace) -> list[tuple[str, str | None, str, str]]:
    return [
        (e.rule.code, e.path, json.dumps(e.before, sort_keys=True), json.dumps(e.after))
        for e in trace.events
    ]


def test_explain_of_a_grouped_mutator_names_each_member_that_changed() -> None:
    optimised, _ = plans()
    trace = Trace()
    payload = {"email": "bob@example.com", "ssn": "078-05-1120", "a": "my secret 12345"}
    optimised.invoke_sync("scrub", "app/run", "request", payload, trace=trace)
    changed = {event.rule.span.line for event in trace.events}
    lines = {ref.span.line for ref in trace.evaluated}
    assert len(changed) >= 4 and changed <= lines


class _Recorded:
    """A plan step that records being run, then runs the step it stands for."""

    def __init__(self, step: Any, runs: list[str]) -> None:
        self.members = step.members
        self._step = step
        self._runs = runs

    def apply(self, ctx: Any, pattern_counts: Any, events: Any) -> Any:
        self._runs.append(type(self._step).__name__)
        return self._step.apply(ctx, pattern_counts, events)


def test_a_traced_invoke_runs_the_grouped_steps_of_the_plan() -> None:
    policies = compile_sources({"plans.policy": POLICY})
    scrub = policies.interceptors["scrub"]
    runs: list[str] = []
    scrub.plan = [
        step if isinstance(step, CompiledMutation) else _Recorded(step, runs) for step in scrub.plan
    ]
    payload = {"email": "bob@example.com", "ssn": "078-05-1120", "a": "my secret 12345"}
    policies.invoke_sync("scrub", "app/run", "request", payload, trace=Trace())
    assert {"FieldGroup", "RewriteGroup"} <= set(runs)


async def test_the_tracing_provider_is_routed_as_the_set_is_and_traces_every_invoke() -> None:
    from policy_engine.testing.local_chain import TracingProvider, run_local_chain
    from policy_engine.wire import ChainExecutionParams

    policies = compile_sources({"plans.policy": POLICY})
    provider = TracingProvider(policies)
    mine, theirs = provider.traits, policies.traits
    assert (mine.never_modifies_payload, mine.evaluates_in_process, mine.honours_timeout_ms) == (
        theirs.never_modifies_payload,
        theirs.evaluates_in_process,
        theirs.honours_timeout_ms,
    )
    assert mine.invoke_fields is not None
    params = ChainExecutionParams(
        event="app/run", phase="request", payload={"email": "bob@example.com", "n": 9}
    )
    result = await run_local_chain(provider, params, side="sending")
    assert result.status != "success"
    traced = {name for name, trace in provider.traces if trace.evaluated}
    assert traced == {"checks", "limits", "scrub"}

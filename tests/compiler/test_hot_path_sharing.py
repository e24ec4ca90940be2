"""What the hot path shares between rules answers as each rule alone would.

* the rules of a `matches` group read one memo entry per payload (where each
  pattern first hits, or nothing when the probe rules the group out);
* a `matching` rule walks its value once (`StringIndex`) and rebuilds it in
  one copy-on-write pass;
* the size a mutator's output is remembered at (so a later interceptor of the
  run need not measure it) is added up from one encoding of the changed
  strings, not one each.

Each is checked against the reference plan (`optimize=False`), including a
payload changed in place between two calls and a mutator's output read by a
later validator in the same run.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from policy_engine.compiler import PolicySet, compile_sources
from policy_engine.compiler.json_size import json_size
from policy_engine.wire import MutationResult, RunState

POLICY = r"""
pattern DIGITS = /[0-9]{3,}/

validator terms {
  on tools/call request
  deny if $.arguments.q matches /\bsecret\b/ "a secret" code secret
  deny if $.arguments.q matches DIGITS "digits" code digits
  warn if $.arguments.q matches EMAIL "an e-mail" code email
  info if $.arguments.q not matches /\bhello\b/ "no greeting" code greeting
  deny if any $.arguments..* matches /\bdrop\s+table\b/ "sql" code sql
  warn if any $.arguments..* matches /\bsecret\b/ "secret anywhere" code anywhere
}

mutator scrub {
  on tools/call request
  redact $..email with "[EMAIL]"
  mask $..card keep 2
  redact $.arguments matching EMAIL, DIGITS with "#"
  redact $.arguments.q matching /\bsecret\b/ with "[S]"
  redact $._meta matching DIGITS
}
"""

WORDS = st.sampled_from(
    ["hello", "secret", "drop table", "4155550100", "bob@example.com", "é", "x", "12", " "]
)
TEXT = st.lists(WORDS, max_size=6).map(" ".join) | st.text(max_size=8)
VALUE = st.recursive(
    TEXT | st.integers() | st.none(),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["q", "email", "card", "n", "deep"]), inner, max_size=3)
    ),
    max_leaves=10,
)
ARGUMENTS = st.dictionaries(st.sampled_from(["q", "email", "card", "n", "deep"]), VALUE, max_size=4)
PAYLOADS = st.builds(lambda args: {"name": "t", "arguments": args}, ARGUMENTS)


@cache
def plans() -> tuple[PolicySet, PolicySet]:
    return (
        compile_sources({"p.policy": POLICY}),
        compile_sources({"p.policy": POLICY}, optimize=False),
    )


def answer(policy: PolicySet, name: str, payload: Any, run: RunState | None = None) -> Any:
    result = policy.invoke_sync(name, "tools/call", "request", payload, run=run)
    return result.model_dump(exclude={"duration_ms"})


@settings(max_examples=200, deadline=None)
@given(payload=PAYLOADS, later=TEXT)
def test_a_payload_changed_in_place_between_calls_is_read_afresh(payload: Any, later: str) -> None:
    """The group's memo entry and the string index belong to one invoke: the same dict,
    changed in place, is judged on what it holds now."""
    optimised, reference = plans()
    for name in ("terms", "scrub"):
        assert answer(optimised, name, payload) == answer(reference, name, copy.deepcopy(payload))
    payload["arguments"]["q"] = later
    for name in ("terms", "scrub"):
        assert answer(optimised, name, payload) == answer(reference, name, copy.deepcopy(payload))


@settings(max_examples=200, deadline=None)
@given(payload=PAYLOADS)
def test_a_mutators_output_is_what_a_later_validator_reads_in_one_run(payload: Any) -> None:
    """In one run the validator reads the mutator's output (a new object, remembered
    with its size and probe) and answers as the reference does on a fresh copy."""
    optimised, reference = plans()
    run = RunState()
    scrubbed = optimised.invoke_sync("scrub", "tools/call", "request", payload, run=run)
    assert isinstance(scrubbed, MutationResult)
    expected = reference.invoke_sync("scrub", "tools/call", "request", copy.deepcopy(payload))
    assert scrubbed.model_dump(exclude={"duration_ms"}) == expected.model_dump(
        exclude={"duration_ms"}
    )
    after = scrubbed.payload
    assert answer(optimised, "terms", after, run) == answer(
        reference, "terms", copy.deepcopy(after)
    )


@settings(max_examples=200, deadline=None)
@given(payload=PAYLOADS)
def test_the_size_a_mutators_output_is_remembered_at_is_its_size(payload: Any) -> None:
    """The run remembers the output with the input's size plus the changes' growth,
    added up from one encoding of all the old strings and one of all the new."""
    optimised, _ = plans()
    run = RunState()
    scrubbed = optimised.invoke_sync("scrub", "tools/call", "request", payload, run=run)
    assert isinstance(scrubbed, MutationResult)
    memo: Any = run.slot(optimised, object)
    bounded = memo.bounded
    if bounded is not None and bounded.payload is scrubbed.payload:
        assert bounded.size == json_size(scrubbed.payload)


def test_two_rules_of_one_group_share_one_memo_entry() -> None:
    """The second rule of a group does not ask the probe again: one entry per payload."""
    optimised, _ = plans()
    terms = optimised.interceptors["terms"]
    payload = {"name": "t", "arguments": {"q": "hello 4155550100 secret"}}
    result = optimised.invoke_sync("terms", "tools/call", "request", payload)
    codes = [rule["rule"].rsplit(":", 1)[-1] for rule in (result.info or {})["rules"]]
    assert len(codes) == 3 and len(terms.checks) == 6
    clean = {"name": "t", "arguments": {"q": "hello there"}}
    assert optimised.invoke_sync("terms", "tools/call", "request", clean).info is None

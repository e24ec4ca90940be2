"""Mutators on random JSON: the input is never changed, `modified` tells the truth."""

from __future__ import annotations

import copy
import json
from functools import cache
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from policy_engine.compiler import PolicySet, compile_sources

POLICY = """
pattern DIGITS = /[0-9]+/

mutator scrub {
  on app/run request
  redact $.a
  mask $..b keep 1
  hash $.c[*]
  set $.d = "x" if exists $.a
  remove $..e
  truncate $..f to 2
  redact $ matching DIGITS, EMAIL with "#"
  set $.g.h = upper($.t) unless missing $.t
}

mutator guarded {
  on app/run request
  param on: bool = true
  remove $.x[0] if param.on == true and length($.x) > 1
  truncate $.b to 1 unless "keep" in context.principal.claims.roles
  mask $.t matching /[aeiou]/ with "_" if $.t like "*a*"
  set $.c = $.f
  hash $..h if count($..h) > 1
}

mutator quiet {
  on app/run request
  redact $.zzz
  truncate $..a to 1000
  redact $..b matching /\\A\\z/
  set $.never = 1 if false
}
"""

KEYS = st.sampled_from(["a", "b", "c", "d", "e", "f", "g", "h", "t", "x", "keep me"])
# Any text, lone surrogates included: JSON can carry them as `\ud800` escapes.
TEXT = st.text(max_size=12) | st.sampled_from(
    ["bob@example.com", "call 4155550100", "aaa", "[REDACTED]", ""]
)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=5),
    max_leaves=20,
)
PAYLOADS = st.dictionaries(KEYS, JSON, max_size=6) | JSON
CONTEXTS = st.none() | st.just(
    {"principal": {"type": "user", "id": "u", "claims": {"roles": ["keep"]}}}
)


@cache
def policy_set() -> PolicySet:
    return compile_sources({"props.policy": POLICY})


def canonical(value: Any) -> str:
    """Type-strict: `true` and `1`, `1` and `1.0`, `1` and `"1"` all differ."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(["scrub", "guarded", "quiet"]),
    PAYLOADS,
    CONTEXTS,
    st.booleans(),
)
def test_invoke_never_changes_its_input_and_modified_is_truthful(
    name: str, payload: Any, context: Any, on: bool
) -> None:
    original = copy.deepcopy(payload)
    config = {"on": on} if name == "guarded" else None
    result = policy_set().invoke_sync(name, "app/run", "request", payload, config, context)
    assert canonical(payload) == canonical(original), "the caller's payload was changed"
    assert payload == original
    changed = canonical(result.payload) != canonical(original)
    assert result.modified == changed
    wire = result.to_wire()
    if wire["modified"]:
        assert wire["info"]["changes"]
    else:
        assert "info" not in wire
        assert result.payload is payload


@settings(max_examples=40, deadline=None)
@given(PAYLOADS)
def test_a_mutator_that_cannot_change_anything_returns_the_input(payload: Any) -> None:
    result = policy_set().invoke_sync("quiet", "app/run", "request", payload)
    wire = result.to_wire()
    assert wire["modified"] is False
    assert result.payload is payload

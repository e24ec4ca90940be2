"""A chain run walks the payload once: a mutator's output inherits its input's bounds."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from policy_engine.compiler import Limits, compile_sources
from policy_engine.compiler import policy_set as policy_set_module
from policy_engine.compiler.bounds import check_bounds, measure_bounds
from policy_engine.compiler.nesting import Encoding
from policy_engine.wire import RunState
from policy_engine.wire.errors import InterceptorError

SOURCE = """
mutator scrub "Scrubs" {
  on tools/call request
  redact $..email with "[EMAIL]"
  mask $..card keep 4
  redact $.arguments matching EMAIL, SSN
}
mutator drop "Drops" {
  on tools/call request
  remove $.arguments.secret
}
validator guard "Guards" {
  on tools/call request
  deny if $.arguments.note matches /forbidden/ "no" code forbidden
}
"""

PAYLOAD = {
    "name": "send",
    "arguments": {
        "email": "bob@example.com",
        "card": 4111111111111111,
        "note": "mail bob@example.com, SSN 123-45-6789",
        "secret": {"k": [1, 2]},
        "deep": [[["x"]]],
    },
}


def walks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    sizes: list[int] = []

    def counting(payload: Any, limits: Limits, interceptor: str) -> tuple[int, Encoding | None]:
        size, data = measure_bounds(payload, limits, interceptor)
        sizes.append(size)
        return size, data

    monkeypatch.setattr(policy_set_module, "measure_bounds", counting)
    return sizes


def test_string_rewrites_carry_the_estimate_to_the_next_interceptor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    policy = compile_sources({"p.policy": SOURCE})
    sizes = walks(monkeypatch)
    run = RunState()
    scrubbed = policy.invoke_sync("scrub", "tools/call", "request", copy.deepcopy(PAYLOAD), run=run)
    assert scrubbed.modified
    verdict = policy.invoke_sync("guard", "tools/call", "request", scrubbed.payload, run=run)
    assert verdict.valid
    assert len(sizes) == 1
    # The carried figure is the one a walk of the output gives.
    assert policy._bounded(scrubbed.payload, "guard", policy._memo(run)).size == check_bounds(
        scrubbed.payload, Limits(), "x"
    )


def test_a_removal_makes_the_next_interceptor_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    policy = compile_sources({"p.policy": SOURCE})
    sizes = walks(monkeypatch)
    run = RunState()
    dropped = policy.invoke_sync("drop", "tools/call", "request", copy.deepcopy(PAYLOAD), run=run)
    assert dropped.modified
    policy.invoke_sync("guard", "tools/call", "request", dropped.payload, run=run)
    assert len(sizes) == 2


def test_an_output_over_the_limit_is_refused_by_the_next_interceptor() -> None:
    payload = {"name": "send", "arguments": {"email": "e", "note": "x" * 100}}
    source = SOURCE.replace('with "[EMAIL]"', 'with "' + "E" * 200 + '"')
    limit = check_bounds(payload, Limits(), "x") + 50
    policy = compile_sources({"p.policy": source}, Limits(max_bytes=limit))
    run = RunState()
    grown = policy.invoke_sync("scrub", "tools/call", "request", payload, run=run)
    assert grown.modified
    with pytest.raises(InterceptorError) as raised:
        policy.invoke_sync("guard", "tools/call", "request", grown.payload, run=run)
    assert raised.value.data is not None
    assert raised.value.data["limit"] == "maxPayloadBytes"


SIZED = """
validator small "Small" {
  on tools/call request
  deny if size($) > 10000 "too big" code big
}
validator noted "Noted" {
  on tools/call request
  info if size($.arguments) > 5 "sizeable" code sizeable
}
"""


def test_size_is_encoded_once_per_payload_and_afresh_for_a_new_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from policy_engine.compiler import conditions

    encoded: list[object] = []
    original = conditions.json_size

    def counting(value: object) -> int:
        encoded.append(value)
        return original(value)

    monkeypatch.setattr(conditions, "json_size", counting)
    policy = compile_sources({"p.policy": SIZED})
    payload = copy.deepcopy(PAYLOAD)
    run = RunState()
    for name in ("small", "noted", "small"):
        policy.invoke_sync(name, "tools/call", "request", payload, run=run)
    # `$.arguments` once, however many invokes of the run read it; `size($)` is
    # the size the bounds check measured, so `$` is never encoded again.
    assert encoded == [payload["arguments"]]
    bigger = copy.deepcopy(PAYLOAD)
    bigger["arguments"]["pad"] = "x" * 20_000
    assert not policy.invoke_sync("small", "tools/call", "request", bigger, run=run).valid
    assert len(encoded) == 1
    # Another run measures again.
    policy.invoke_sync("noted", "tools/call", "request", payload, run=RunState())
    assert encoded == [payload["arguments"]] * 2


def test_the_measured_size_is_the_size_rules_see() -> None:
    """`size($)` read from the bound equals encoding the payload, before and after
    a string rewrite carried the size across a mutator."""
    from policy_engine.compiler.json_size import json_size

    source = SOURCE + SIZED.replace("small", "exact").replace(
        'deny if size($) > 10000 "too big" code big',
        f'deny if size($) == {json_size(PAYLOAD)} "same" code same',
    )
    policy = compile_sources({"p.policy": source})
    payload = copy.deepcopy(PAYLOAD)
    run = RunState()
    assert not policy.invoke_sync("exact", "tools/call", "request", payload, run=run).valid
    scrubbed = policy.invoke_sync("scrub", "tools/call", "request", payload, run=run)
    assert scrubbed.modified
    after = scrubbed.payload
    last = policy._memo(run).bounded
    assert last is not None and last.payload is after
    assert last.size == json_size(after)


_TEXT = st.text(alphabet='ab "\\\n\x01é😀@.', max_size=12)

CARRIED = """
mutator carry "Carries its size" {
  on tools/call request
  redact $..k with "[\\"é\\"]"
  mask $..m keep 2
  redact $..text matching /[@é]+/ with "<\\\\>"
}
"""


@given(
    st.recursive(
        st.dictionaries(
            st.sampled_from(["k", "m", "text", "x"]), _TEXT | st.integers(), max_size=4
        ),
        lambda inner: (
            st.dictionaries(st.sampled_from(["k", "m", "text", "y"]), inner, max_size=3)
            | st.lists(inner, max_size=3)
        ),
        max_leaves=12,
    )
)
def test_the_carried_size_is_the_encoded_size_on_any_strings(payload: Any) -> None:
    """Quotes, backslashes, control and non-ASCII characters change a string's
    encoded size by more than its length: the carried figure must not drift."""
    from policy_engine.compiler.json_size import json_size

    policy = compile_sources({"c.policy": CARRIED})
    run = RunState()
    result = policy.invoke_sync("carry", "tools/call", "request", payload, run=run)
    last = policy._memo(run).bounded
    assert last is not None
    if last.payload is result.payload:
        assert last.size == json_size(result.payload)

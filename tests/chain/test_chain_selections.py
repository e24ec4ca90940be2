"""What an InterceptorChain keeps of each event's selection, and its bounds.

The chain keeps the sorted entries per (event, phase) instead of sorting
them on every run; the event is the method a peer sent, so what is kept is
bounded in count and in key length, and a run with a named selection is
never kept.
"""

from __future__ import annotations

from typing import Any

import anyio

from policy_engine.chain import InterceptorChain
from policy_engine.chain.interceptor_chain import MAX_KEPT_EVENT_LENGTH, MAX_KEPT_SELECTIONS
from policy_engine.wire import ChainExecutionParams

from .providers import Journal, ScriptedProvider, append, entries, mutator, validator


def _chain(journal: Journal) -> InterceptorChain:
    provider = ScriptedProvider(
        "h",
        mutator("late", append("late"), events=("*",), priorityHint=10),
        mutator("early", append("early"), events=("*",), priorityHint=-10),
        validator("check", events=("*",)),
        journal=journal,
    )
    return InterceptorChain(entries(provider))


def _run(chain: InterceptorChain, event: str, **fields: Any) -> Any:
    params = ChainExecutionParams(event=event, phase="request", payload={}, **fields)
    return anyio.run(lambda: chain.execute(params, side="sending"))


def test_a_kept_selection_runs_in_the_same_order_as_a_fresh_one() -> None:
    journal = Journal()
    chain = _chain(journal)
    first = _run(chain, "tools/call")
    second = _run(chain, "tools/call")
    assert first.final_payload == second.final_payload == {"trail": ["early", "late"]}
    assert journal.started == ["early@h", "late@h", "check@h"] * 2


def test_kept_selections_are_bounded_in_count() -> None:
    journal = Journal()
    chain = _chain(journal)
    events = [f"x/{k}" for k in range(MAX_KEPT_SELECTIONS + 40)]
    for event in events:
        assert _run(chain, event).status == "success"
    assert len(chain._selections) == MAX_KEPT_SELECTIONS
    # The oldest went first; the newest are kept.
    assert ("x/0", "request") not in chain._selections
    assert (events[-1], "request") in chain._selections
    assert len(journal.started) == 3 * len(events)


def test_a_long_event_name_is_run_but_not_kept() -> None:
    journal = Journal()
    chain = _chain(journal)
    event = "x/" + "a" * MAX_KEPT_EVENT_LENGTH
    assert _run(chain, event).final_payload == {"trail": ["early", "late"]}
    assert chain._selections == {}


def test_a_named_selection_is_run_but_not_kept() -> None:
    journal = Journal()
    chain = _chain(journal)
    result = _run(chain, "tools/call", interceptors=["late"])
    assert result.final_payload == {"trail": ["late"]}
    assert journal.started == ["late@h"]
    assert chain._selections == {}
    # The unnamed run after it selects every entry again.
    assert _run(chain, "tools/call").final_payload == {"trail": ["early", "late"]}


def test_what_fires_is_answered_from_the_same_bounded_selections() -> None:
    """The interception core asks this of every message's method, which a peer picks."""
    from policy_engine.interception import Interception

    provider = ScriptedProvider("h", validator("check", events=("tools/*",), phases=("request",)))
    chain = InterceptorChain(entries(provider))
    core = Interception(chain)
    assert core.hooked("tools/call", "request")
    assert not core.hooked("tools/call", "response")
    for k in range(MAX_KEPT_SELECTIONS + 10):
        assert not core.hooked(f"x/{k}", "request")
        assert core.hooked(f"tools/{k}", "request")
    assert len(chain._selections) == MAX_KEPT_SELECTIONS
    long_event = "tools/" + "a" * MAX_KEPT_EVENT_LENGTH
    assert core.hooked(long_event, "request")
    assert (long_event, "request") not in chain._selections

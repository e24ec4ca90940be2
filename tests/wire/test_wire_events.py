"""How a hook's event matches a lifecycle event (``event_matches``)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from policy_engine.wire import (
    STANDARD_EVENTS,
    WILDCARD,
    HookIndex,
    any_event_matches,
    event_matches,
)

CASES: list[tuple[str, str, bool]] = [
    # Exact names.
    ("tools/call", "tools/call", True),
    ("tools/call", "tools/list", False),
    ("tools/call", "prompts/get", False),
    ("sampling/createMessage", "sampling/createMessage", True),
    ("sampling/createMessage", "sampling/createmessage", False),
    # The catch-all.
    ("*", "tools/call", True),
    ("*", "llm/completion", True),
    ("*", "custom/myOperation", True),
    ("*", "*", True),
    # A namespace wildcard covers the namespace and nothing else.
    ("tools/*", "tools/call", True),
    ("tools/*", "tools/list", True),
    ("tools/*", "toolsx/call", False),
    ("tools/*", "tools", False),
    ("tools/*", "tools/", False),
    ("tools/*", "prompts/get", False),
    ("tools/*", "xtools/call", False),
    ("resources/*", "resources/subscribe", True),
    # A wildcard used as the event only matches the same wildcard or ``*``.
    ("tools/*", "tools/*", True),
    ("tools/call", "tools/*", False),
    ("tools/call", "*", False),
    # Custom events follow namespace/operation and match like standard ones.
    ("custom/myOperation", "custom/myOperation", True),
    ("custom/myOperation", "custom/otherOperation", False),
    ("custom/*", "custom/myOperation", True),
    ("custom/*", "customer/myOperation", False),
]


@pytest.mark.parametrize(("hook_event", "event", "expected"), CASES)
def test_event_matches(hook_event: str, event: str, expected: bool) -> None:
    assert event_matches(hook_event, event) is expected


@pytest.mark.parametrize("event", STANDARD_EVENTS)
def test_every_standard_event_matches_itself_and_the_wildcard(event: str) -> None:
    assert event_matches(event, event)
    assert event_matches(WILDCARD, event)
    namespace = event.split("/")[0]
    assert event_matches(f"{namespace}/*", event)


def test_standard_events_are_the_ones_the_sep_lists() -> None:
    assert set(STANDARD_EVENTS) == {
        "tools/list",
        "tools/call",
        "prompts/list",
        "prompts/get",
        "resources/list",
        "resources/read",
        "resources/subscribe",
        "sampling/createMessage",
        "elicitation/create",
        "roots/list",
        "llm/completion",
    }


def test_any_event_matches() -> None:
    assert any_event_matches(["prompts/get", "tools/*"], "tools/call")
    assert not any_event_matches(["prompts/get", "tools/list"], "tools/call")
    assert not any_event_matches([], "tools/call")


_EVENTS = st.sampled_from(["*", "tools/*", "tools/call", "tools/", "tools", "prompts/get", "a/*"])
_PHASES = st.sampled_from(["request", "response"])


@given(st.lists(st.tuples(st.lists(_EVENTS, max_size=3), _PHASES), max_size=4), _EVENTS, _PHASES)
def test_the_hook_index_answers_as_the_hooks_scanned_one_by_one(
    hooks: list[tuple[list[str], str]], event: str, phase: str
) -> None:
    scanned = any(p == phase and any_event_matches(events, event) for events, p in hooks)
    assert HookIndex(hooks).fires(event, phase) is scanned

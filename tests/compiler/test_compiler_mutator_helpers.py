"""`map_strings` (the `matching` walk) and `changed_leaves` (per-leaf trace events)."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from policy_engine.compiler.mutators import changed_leaves, map_strings, stable_tag
from policy_engine.compiler.string_index import StringIndex

KEYS = st.sampled_from(["a", "b", "text", "x y"])
SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=15,
)


def reference_map(value: Any, fn: Any) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        return [reference_map(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: reference_map(v, fn) for k, v in value.items()}
    return value


def count_strings(value: Any) -> int:
    if isinstance(value, str):
        return 1
    if isinstance(value, list):
        return sum(count_strings(v) for v in value)
    if isinstance(value, dict):
        return sum(count_strings(v) for v in value.values())
    return 0


# --------------------------------------------------------------- map_strings


def test_map_strings_reaches_nested_strings_but_not_keys() -> None:
    value = {"key": ["abc", {"inner": "d"}, 3, None, True], "n": 1.5}
    assert map_strings(value, str.upper) == {
        "key": ["ABC", {"inner": "D"}, 3, None, True],
        "n": 1.5,
    }


def test_map_strings_on_a_bare_string_and_scalars() -> None:
    assert map_strings("x", lambda s: s + "!") == "x!"
    for scalar in (None, True, 0, 2.5):
        assert map_strings(scalar, lambda s: "changed") is scalar


def test_map_strings_copies_only_what_changes() -> None:
    untouched = {"deep": [1, 2, {"n": 3}]}
    changed = ["keep", "CHANGE"]
    value = {"untouched": untouched, "changed": changed}
    result = map_strings(value, lambda s: s.lower() if s.isupper() else s)
    assert result == {"untouched": untouched, "changed": ["keep", "change"]}
    assert result is not value
    assert result["untouched"] is untouched
    assert result["changed"] is not changed
    assert changed == ["keep", "CHANGE"]


def test_map_strings_returns_the_same_object_when_nothing_changes() -> None:
    value = {"a": ["x", {"b": "y"}], "c": 1}
    assert map_strings(value, lambda s: s) is value


@given(JSON)
def test_map_strings_agrees_with_a_reference_and_never_mutates(value: Any) -> None:
    before = copy.deepcopy(value)
    result = map_strings(value, lambda s: s[::-1] + "#")
    assert result == reference_map(before, lambda s: s[::-1] + "#")
    assert value == before
    assert map_strings(value, lambda s: s) is value


# ------------------------------------------------------------ changed_leaves


def test_identical_values_have_no_changed_leaves() -> None:
    value = {"a": [1, {"b": "c"}]}
    assert changed_leaves(value, value, ()) == []
    assert changed_leaves(value, copy.deepcopy(value), ()) == []


def test_changed_leaves_are_located_under_the_starting_location() -> None:
    old = {"text": "hi bob", "list": ["a", "b", "c"], "same": {"x": 1}}
    new = {"text": "hi [NAME]", "list": ["a", "B", "C"], "same": {"x": 1}}
    assert changed_leaves(old, new, ("arguments",)) == [
        (("arguments", "text"), "hi bob", "hi [NAME]"),
        (("arguments", "list", 1), "b", "B"),
        (("arguments", "list", 2), "c", "C"),
    ]


def test_a_change_of_shape_is_one_leaf() -> None:
    assert changed_leaves({"a": 1}, {"b": 1}, ("x",)) == [(("x",), {"a": 1}, {"b": 1})]
    assert changed_leaves([1, 2], [1], ("l",)) == [(("l",), [1, 2], [1])]
    assert changed_leaves({"a": {"b": 1}}, {"a": "[REDACTED]"}, ()) == [
        (("a",), {"b": 1}, "[REDACTED]")
    ]
    assert changed_leaves("s", ["s"], (0,)) == [((0,), "s", ["s"])]


@given(JSON)
def test_changing_every_string_reports_every_string(value: Any) -> None:
    new = map_strings(value, lambda s: s + "~")
    leaves = changed_leaves(value, new, ("root",))
    assert len(leaves) == count_strings(value)
    assert [after for _, _, after in leaves] == [
        before + "~" for _, before, _ in leaves if isinstance(before, str)
    ]
    for location, before, _ in leaves:
        assert location[0] == "root"
        here: Any = value
        for step in location[1:]:
            here = here[step]
        assert here == before


def test_stable_tag() -> None:
    assert stable_tag("secret") == "sha256:2bb80d537b1da3e3"
    assert stable_tag("secret") == stable_tag("secret")
    assert stable_tag("secret") != stable_tag("Secret")


# --------------------------------------------------------------- StringIndex


def _visit_order(value: Any) -> list[str]:
    """The strings in the order the recursive walk (`map_strings`) visits them."""
    seen: list[str] = []

    def note(text: str) -> str:
        seen.append(text)
        return text

    map_strings(value, note)
    return seen


@given(value=JSON, data=st.data())
def test_a_string_index_rewrites_as_map_strings_does(value: Any, data: st.DataObject) -> None:
    """Same strings in the same order, the same result, the same containers copied,
    and the input untouched: the one-walk index is the recursive rebuild."""
    before = copy.deepcopy(value)
    index = StringIndex(value)
    assert [slot[0] for slot in index.slots] == _visit_order(value)
    chosen = data.draw(st.sets(st.sampled_from(_visit_order(value) or [""])))

    def fn(text: str) -> str:
        return text + "!" if text in chosen else text

    rebuilt = index.rewrite(fn)
    expected = map_strings(value, fn)
    assert rebuilt == expected
    assert value == before
    assert _shared(rebuilt, value) == _shared(expected, value)


@given(value=JSON)
def test_a_string_index_survives_aliased_containers(value: Any) -> None:
    """One container reached twice is two places: each copy changes on its own."""
    doubled = [value, {"again": value}]
    index = StringIndex(doubled)
    assert index.rewrite(str.upper) == map_strings(doubled, str.upper)
    assert doubled == [value, {"again": value}]


def _shared(new: Any, old: Any) -> list[bool]:
    """For each container of ``new`` in pre-order, whether it is ``old``'s own object."""
    out = [new is old]
    if isinstance(new, list) and isinstance(old, list):
        for a, b in zip(new, old, strict=True):
            out += _shared(a, b) if isinstance(a, list | dict) else []
    elif isinstance(new, dict) and isinstance(old, dict):
        for key in new:
            out += _shared(new[key], old[key]) if isinstance(new[key], list | dict) else []
    return out

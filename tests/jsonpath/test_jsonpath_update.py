"""CompiledPath.update / set: copy-on-write changes, removals, creation, and counts."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from policy_engine.compiler.jsonpath import KEEP, REMOVE, CompiledPath, compile_path
from policy_engine.language.path_syntax import parse_path

Location = tuple[str | int, ...]


def compiled(source: str) -> CompiledPath:
    return compile_path(parse_path(source))


def payload() -> dict[str, Any]:
    return {
        "name": "send_mail",
        "arguments": {
            "query": "hello",
            "to": [{"name": "Ann", "email": "ann@x.org"}, {"name": "Bob"}],
            "cc": {"email": "cc@x.org"},
        },
        "content": [
            {"type": "text", "text": "one", "email": "c0@x.org"},
            {"type": "image", "data": "AAAA"},
            {"type": "text", "text": "two"},
        ],
        "meta": {"trace": [1, 2, 3]},
    }


def assert_shared_except(old: Any, new: Any, changed: list[Location]) -> None:
    """Every subtree with no change at or below it is the very same object in ``new``."""

    def walk(old_node: Any, new_node: Any, here: Location) -> None:
        if not any(loc[: len(here)] == here for loc in changed):
            assert new_node is old_node, f"{here} was copied but did not change"
            return
        if isinstance(old_node, dict) and isinstance(new_node, dict):
            for key in old_node.keys() & new_node.keys():
                walk(old_node[key], new_node[key], (*here, key))

    walk(old, new, ())


def redact(value: Any, loc: Location) -> Any:
    return "[REDACTED]"


# --------------------------------------------------------------------------- update


@pytest.mark.parametrize(
    ("source", "changed"),
    [
        ("$.arguments.query", [("arguments", "query")]),
        ("$.content[-1].text", [("content", 2, "text")]),
        ("$.content[*].text", [("content", 0, "text"), ("content", 2, "text")]),
        ("$.content[?(@.type == 'text')].type", [("content", 0, "type"), ("content", 2, "type")]),
        (
            "$..email",
            [
                ("arguments", "to", 0, "email"),
                ("arguments", "cc", "email"),
                ("content", 0, "email"),
            ],
        ),
        ("$.meta.trace[1:]", [("meta", "trace", 1), ("meta", "trace", 2)]),
    ],
)
def test_update_is_copy_on_write(source: str, changed: list[Location]) -> None:
    doc = payload()
    before = copy.deepcopy(doc)
    seen: list[Location] = []

    def fn(value: Any, loc: Location) -> Any:
        seen.append(loc)
        return "[REDACTED]"

    new, count = compiled(source).update(doc, fn)
    assert doc == before  # the input is never modified
    assert seen == changed  # document order, normalized locations
    assert count == len(changed)
    for loc in changed:
        node = new
        for key in loc:
            node = node[key]
        assert node == "[REDACTED]"
    assert_shared_except(doc, new, changed)


def test_update_copies_only_the_containers_on_the_changed_path() -> None:
    doc = payload()
    new, _ = compiled("$.arguments.to[0].email").update(doc, redact)
    assert new is not doc
    assert new["arguments"] is not doc["arguments"]
    assert new["arguments"]["to"] is not doc["arguments"]["to"]
    assert new["arguments"]["to"][0] is not doc["arguments"]["to"][0]
    assert new["arguments"]["to"][1] is doc["arguments"]["to"][1]
    assert new["arguments"]["cc"] is doc["arguments"]["cc"]
    assert new["content"] is doc["content"]
    assert new["meta"] is doc["meta"]


@pytest.mark.parametrize(
    "source", ["$.nope", "$.arguments.query", "$..email", "$.content[*]", "$..nope", "$[?(@)]"]
)
def test_update_that_changes_nothing_returns_the_original_object(source: str) -> None:
    doc = payload()
    for fn in (lambda v, loc: KEEP, lambda v, loc: v):
        new, count = compiled(source).update(doc, fn)
        assert new is doc
        assert count == 0


def test_update_fn_gets_the_original_value_and_may_return_containers() -> None:
    doc = payload()
    new, count = compiled("$.content[*]").update(
        doc, lambda item, loc: {**item, "index": loc[-1]} if item["type"] == "text" else KEEP
    )
    assert count == 2
    assert [item.get("index") for item in new["content"]] == [0, None, 2]
    assert new["content"][1] is doc["content"][1]


def test_very_long_paths_update_without_recursion() -> None:
    doc: Any = "leaf"
    for _ in range(3000):
        doc = {"k": doc}
    new, count = compiled("$" + ".*" * 3000).update(doc, lambda value, loc: value.upper())
    assert count == 1
    node = new
    for _ in range(3000):
        node = node["k"]
    assert node == "LEAF"
    assert compiled("$" + ".k" * 3000).update(doc, lambda value, loc: REMOVE)[1] == 1


def test_update_root() -> None:
    doc = payload()
    assert compiled("$").update(doc, lambda v, loc: {"replaced": loc}) == ({"replaced": ()}, 1)
    assert compiled("$").update(doc, lambda v, loc: KEEP) == (doc, 0)
    with pytest.raises(ValueError, match="root"):
        compiled("$").update(doc, lambda v, loc: REMOVE)


# --------------------------------------------------------------------------- removal


@pytest.mark.parametrize(
    ("source", "doc", "expected", "count"),
    [
        ("$[*]", [0, 1, 2, 3, 4, 5], [], 6),
        ("$[0,2,4]", [0, 1, 2, 3, 4, 5], [1, 3, 5], 3),
        ("$[4,0,2]", [0, 1, 2, 3, 4, 5], [1, 3, 5], 3),
        ("$[-1,-2]", [0, 1, 2, 3], [0, 1], 2),
        ("$[0,-4]", [0, 1, 2, 3], [1, 2, 3], 1),  # one element, selected twice
        ("$[::2]", [0, 1, 2, 3, 4, 5], [1, 3, 5], 3),
        ("$[::-2]", [0, 1, 2, 3, 4, 5], [0, 2, 4], 3),
        ("$[1:-1]", [0, 1, 2, 3], [0, 3], 2),
        ("$[?(@ > 1)]", [3, 0, 2, 1, 5], [0, 1], 3),
        ("$[?(@.drop)]", [{"drop": 1}, {"k": 1}, {"drop": 0}], [{"k": 1}], 2),
        ("$.a[*].b[0]", {"a": [{"b": [1, 2]}, {"b": [3]}]}, {"a": [{"b": [2]}, {"b": []}]}, 2),
        ("$..[0]", [[1, 2], [3, [4, 5]]], [[[5]]], 3),  # [0][0] went with [0]
        ("$..[1]", [[1, 2], [3, [4, 5]]], [[1]], 2),
        ("$..[?(@ == 2)]", [[1, 2], [2, [2, 5]]], [[1], [[5]]], 3),
        ("$.a", {"a": 1, "b": 2}, {"b": 2}, 1),
        ("$['a','c']", {"a": 1, "b": 2, "c": 3}, {"b": 2}, 2),
        ("$..secret", {"secret": 1, "x": {"secret": 2, "y": 3}}, {"x": {"y": 3}}, 2),
        ("$.*[?(@ > 1)]", {"l": [1, 2, 3], "d": {"a": 2, "b": 0}}, {"l": [1], "d": {"b": 0}}, 3),
    ],
)
def test_remove_deletes_the_right_keys_and_elements(
    source: str, doc: Any, expected: Any, count: int
) -> None:
    before = copy.deepcopy(doc)
    assert compiled(source).update(doc, lambda v, loc: REMOVE) == (expected, count)
    assert doc == before


def test_remove_some_elements_and_replace_others_in_one_list() -> None:
    doc = {"items": ["a", "drop", "b", "drop", "c"]}

    def fn(value: Any, loc: Location) -> Any:
        return REMOVE if value == "drop" else value.upper()

    new, count = compiled("$.items[*]").update(doc, fn)
    assert new == {"items": ["A", "B", "C"]}
    assert count == 5
    assert doc == {"items": ["a", "drop", "b", "drop", "c"]}


def test_remove_inside_elements_of_a_list_that_also_loses_elements() -> None:
    doc = [{"x": 1, "y": [0, 1]}, {"x": 2}, {"x": 3, "y": [1, 1]}]

    def fn(value: Any, loc: Location) -> Any:
        return REMOVE if value == {"x": 2} or value == 1 else KEEP

    # All locations refer to the original indexes: [1] goes, and so do
    # [0].x, [0].y[1], [2].y[0] and [2].y[1]; [1].x went with [1].
    new, count = compiled("$..*").update(doc, fn)
    assert new == [{"y": [0]}, {"x": 3, "y": []}]
    assert count == 5


# --------------------------------------------------------------------------- overlapping matches


def test_matches_inside_a_replaced_value_are_skipped() -> None:
    doc = {"a": {"a": {"a": 1}}, "b": {"a": 2}}
    calls: list[Location] = []

    def fn(value: Any, loc: Location) -> Any:
        calls.append(loc)
        return "X"

    new, count = compiled("$..a").update(doc, fn)
    assert new == {"a": "X", "b": {"a": "X"}}
    assert calls == [("a",), ("b", "a")]
    assert count == 2


def test_matches_inside_a_kept_value_are_still_visited() -> None:
    doc = {"a": {"a": {"a": 1}}}
    calls: list[Location] = []

    def fn(value: Any, loc: Location) -> Any:
        calls.append(loc)
        return value + 1 if isinstance(value, int) else KEEP

    new, count = compiled("$..a").update(doc, fn)
    assert calls == [("a",), ("a", "a"), ("a", "a", "a")]
    assert new == {"a": {"a": {"a": 2}}}
    assert count == 1


def test_a_location_selected_twice_is_updated_once() -> None:
    calls: list[Location] = []

    def fn(value: Any, loc: Location) -> Any:
        calls.append(loc)
        return value * 10

    assert compiled("$['a','a']").update({"a": 1}, fn) == ({"a": 10}, 1)
    assert compiled("$[0,-1]").update([1], fn) == ([10], 1)
    doc = {"a": {"a": {"b": 1}}}
    assert compiled("$..a..b").find(doc) == [(1, ("a", "a", "b"))] * 2
    assert compiled("$..a..b").update(doc, fn) == ({"a": {"a": {"b": 10}}}, 1)
    assert calls == [("a",), (0,), ("a", "a", "b")]


def test_two_descends_still_update_ancestors_before_descendants() -> None:
    doc = {"x": {"a": {"b": {"a": {"b": 1}}}}}
    calls: list[Location] = []

    def fn(value: Any, loc: Location) -> Any:
        calls.append(loc)
        return "X"

    new, count = compiled("$..a..b").update(doc, fn)
    assert new == {"x": {"a": {"b": "X"}}}
    assert (calls, count) == ([("x", "a", "b")], 1)


def test_filter_update_changes_object_members_too() -> None:
    """jsonpath-ng's Filter.update only touches list elements; we treat objects like find does.

    (That jsonpath-ng gap is why filters are left out of the update property test.)
    """
    doc = {"p": {"kind": "secret", "v": 1}, "q": {"kind": "public"}, "r": [{"kind": "secret"}]}
    new, count = compiled("$[?(@.kind == 'secret')]").update(doc, lambda v, loc: "hidden")
    assert (new, count) == ({"p": "hidden", "q": {"kind": "public"}, "r": [{"kind": "secret"}]}, 1)
    new, count = compiled("$..[?(@.kind == 'secret')]").update(doc, lambda v, loc: "hidden")
    assert (new, count) == ({"p": "hidden", "q": {"kind": "public"}, "r": ["hidden"]}, 2)
    assert doc["p"] == {"kind": "secret", "v": 1}


# --------------------------------------------------------------------------- set


def test_set_replaces_an_existing_value() -> None:
    doc = payload()
    new, count = compiled("$.arguments.query").set(doc, "bye")
    assert (new["arguments"]["query"], count) == ("bye", 1)
    assert doc["arguments"]["query"] == "hello"
    assert new["arguments"]["to"] is doc["arguments"]["to"]


def test_set_creates_a_missing_final_key_in_an_existing_object() -> None:
    doc = payload()
    new, count = compiled("$.arguments.safe").set(doc, True)
    assert (new["arguments"]["safe"], count) == (True, 1)
    assert list(new["arguments"]) == ["query", "to", "cc", "safe"]
    assert "safe" not in doc["arguments"]
    new, count = compiled("$.content[1].alt").set(doc, "image")
    assert (new["content"][1], count) == ({"type": "image", "data": "AAAA", "alt": "image"}, 1)
    new, count = compiled("$.content[-1].alt").set(doc, "last")
    assert (new["content"][2]["alt"], count) == ("last", 1)


def test_set_creates_missing_objects_on_a_path_of_names() -> None:
    doc = payload()
    new, count = compiled("$.arguments.policy.flags.safe").set(doc, True)
    assert new["arguments"]["policy"] == {"flags": {"safe": True}}
    assert count == 1
    assert compiled("$.x.y").set({}, 1) == ({"x": {"y": 1}}, 1)


@pytest.mark.parametrize(
    "source",
    [
        "$.content[7].text",  # index out of range: lists are never padded
        "$.content[1].meta.alt",  # missing intermediate on a path with an index
        "$.name.first",  # the holder is a string, not an object
        "$.content.first",  # ... or a list
        "$.meta.trace[5]",
    ],
)
def test_set_does_not_create_what_the_path_cannot_name(source: str) -> None:
    doc = payload()
    assert compiled(source).set(doc, 1) == (doc, 0)
    assert compiled(source).set(doc, 1)[0] is doc


def test_set_on_a_non_singular_path_sets_every_match_without_creating() -> None:
    doc = payload()
    new, count = compiled("$.content[*].text").set(doc, "")
    assert [item.get("text") for item in new["content"]] == ["", None, ""]
    assert count == 2
    assert compiled("$..missing").set(doc, 1) == (doc, 0)


def test_set_to_the_same_object_changes_nothing() -> None:
    doc = {"a": {"flag": True}}
    assert compiled("$.a.flag").set(doc, True) == (doc, 0)
    assert compiled("$.a.flag").set(doc, True)[0] is doc


def test_set_root() -> None:
    assert compiled("$").set({"a": 1}, [1]) == ([1], 1)

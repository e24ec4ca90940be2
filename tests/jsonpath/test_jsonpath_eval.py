"""CompiledPath.find / values: what each path selects, where, and in which order."""

from __future__ import annotations

import json
from typing import Any

import pytest

from policy_engine.compiler.jsonpath import (
    DEFAULT_MAX_DEPTH,
    CompiledPath,
    PayloadTooDeep,
    compile_path,
)
from policy_engine.language.path_syntax import parse_path

# A tools/call payload as a policy sees it.
CALL: dict[str, Any] = {
    "name": "send_mail",
    "arguments": {
        "query": "hello",
        "to": [{"name": "Ann", "email": "ann@example.com"}, {"name": "Bob"}],
        "cc": {"email": "cc@example.com"},
        "flags": [True, 1, 0, False, None, "1"],
    },
    "content": [
        {"type": "text", "text": "mail ann@example.com", "priority": 2},
        {"type": "image", "data": "AAAA", "priority": 0.5},
        {"type": "text", "text": "bye", "email": "bye@example.com"},
    ],
    "email": "root@example.com",
}


def compiled(source: str, **options: Any) -> CompiledPath:
    return compile_path(parse_path(source), **options)


FIND: list[tuple[str, list[tuple[Any, tuple[str | int, ...]]]]] = [
    ("$", [(CALL, ())]),
    ("$.name", [("send_mail", ("name",))]),
    ("$.arguments.query", [("hello", ("arguments", "query"))]),
    ("$['arguments']['query']", [("hello", ("arguments", "query"))]),
    ("$.arguments.missing", []),
    ("$.name.length", []),  # a name on a string selects nothing
    ("$.content.type", []),  # a name on a list selects nothing
    ("$.arguments[0]", []),  # an index on an object selects nothing
    ("$.arguments[0:1]", []),  # so does a slice
    ("$.content[0].text", [("mail ann@example.com", ("content", 0, "text"))]),
    ("$.content[-1].type", [("text", ("content", 2, "type"))]),  # locations are normalized
    ("$.content[3]", []),
    ("$.content[-4]", []),
    (
        "$.content[2,0].type",
        [("text", ("content", 2, "type")), ("text", ("content", 0, "type"))],
    ),
    ("$.content[0,0].priority", [(2, ("content", 0, "priority"))] * 2),  # as jsonpath-ng
    (
        "$.content[*].text",
        [("mail ann@example.com", ("content", 0, "text")), ("bye", ("content", 2, "text"))],
    ),
    (
        "$.content.*.type",
        [
            ("text", ("content", 0, "type")),
            ("image", ("content", 1, "type")),
            ("text", ("content", 2, "type")),
        ],
    ),
    ("$.content[1:].type", [("image", ("content", 1, "type")), ("text", ("content", 2, "type"))]),
    ("$.content[::-2].type", [("text", ("content", 2, "type")), ("text", ("content", 0, "type"))]),
    ("$.content[:0]", []),
    ("$.arguments.cc.*", [("cc@example.com", ("arguments", "cc", "email"))]),
    (
        "$.arguments['cc','query','nope']",
        [({"email": "cc@example.com"}, ("arguments", "cc")), ("hello", ("arguments", "query"))],
    ),
    (
        "$..email",  # the root's own member first, then pre-order
        [
            ("root@example.com", ("email",)),
            ("ann@example.com", ("arguments", "to", 0, "email")),
            ("cc@example.com", ("arguments", "cc", "email")),
            ("bye@example.com", ("content", 2, "email")),
        ],
    ),
    (
        "$.arguments..name",
        [("Ann", ("arguments", "to", 0, "name")), ("Bob", ("arguments", "to", 1, "name"))],
    ),
    ("$..to[1]", [({"name": "Bob"}, ("arguments", "to", 1))]),
    ("$..flags[-1]", [("1", ("arguments", "flags", 5))]),
    (
        "$.content[?(@.type == 'text')].text",
        [("mail ann@example.com", ("content", 0, "text")), ("bye", ("content", 2, "text"))],
    ),
    ("$.content[?(@.type != 'text')].type", [("image", ("content", 1, "type"))]),
    ("$.content[?(@.email)].type", [("text", ("content", 2, "type"))]),
    ("$.content[?(@.priority > 1)].type", [("text", ("content", 0, "type"))]),
    ("$.content[?(@.priority <= 0.5)].type", [("image", ("content", 1, "type"))]),
    ("$.content[?(@.priority < 'z')]", []),  # numbers and strings are not ordered
    ("$.arguments[?(@.email)]", [({"email": "cc@example.com"}, ("arguments", "cc"))]),
    ("$.arguments.flags[?(@ == 1)]", [(1, ("arguments", "flags", 1))]),  # not True
    ("$.arguments.flags[?(@ == true)]", [(True, ("arguments", "flags", 0))]),  # not 1
    ("$.arguments.flags[?(@ == 0)]", [(0, ("arguments", "flags", 2))]),  # not False
    ("$.arguments.flags[?(@ == null)]", [(None, ("arguments", "flags", 4))]),
    ("$.arguments.flags[?(@ == '1')]", [("1", ("arguments", "flags", 5))]),
    ("$.arguments.flags[?(@ >= 1)]", [(1, ("arguments", "flags", 1))]),
    ("$.arguments.flags[?(@ > false)]", []),  # booleans are not ordered
    ("$.arguments.flags[?(@ >= false)]", []),  # ordering needs two numbers
    ("$.arguments.flags[?(@ < null)]", []),
    (
        "$.arguments.to[?(@.email != 'x')].name",  # a missing member compares false, as in rules
        [("Ann", ("arguments", "to", 0, "name"))],
    ),
    ("$.arguments.to[?(@.email == null)]", []),  # ... but is not null either
    ("$.content[?(@['type'] == 'image')].data", [("AAAA", ("content", 1, "data"))]),
    ("$.arguments[?(@[0] == true)]", [(CALL["arguments"]["flags"], ("arguments", "flags"))]),
]


@pytest.mark.parametrize(("source", "expected"), FIND, ids=[s for s, _ in FIND])
def test_find_selects_these_values_at_these_locations(
    source: str, expected: list[tuple[Any, tuple[str | int, ...]]]
) -> None:
    path = compiled(source)
    assert path.find(CALL) == expected
    assert path.values(CALL) == [value for value, _ in expected]


def test_find_returns_the_documents_own_objects() -> None:
    ((value, _),) = compiled("$.arguments.cc").find(CALL)
    assert value is CALL["arguments"]["cc"]


def test_descend_visits_a_node_before_its_descendants_and_siblings_in_order() -> None:
    doc = {"a": {"a": {"a": 1}, "b": [{"a": 2}]}, "c": {"a": 3}}
    assert compiled("$..a").find(doc) == [
        ({"a": {"a": 1}, "b": [{"a": 2}]}, ("a",)),
        ({"a": 1}, ("a", "a")),
        (1, ("a", "a", "a")),
        (2, ("a", "b", 0, "a")),
        (3, ("c", "a")),
    ]
    # `..*` lists a node's children before descending into the first of them.
    assert [loc for _, loc in compiled("$..*").find({"x": {"y": 1}, "z": 2})] == [
        ("x",),
        ("z",),
        ("x", "y"),
    ]


def test_descend_includes_the_starting_node() -> None:
    doc = {"email": "a", "inner": {"email": "b"}}
    assert compiled("$.inner..email").values(doc) == ["b"]
    assert compiled("$..[0]").values([[1], 2]) == [[1], 1]


def test_descend_filter_tests_members_of_every_object_and_list() -> None:
    doc = {"a": {"k": 1}, "b": [{"k": 2}, {"j": 3}], "k": 0}
    assert compiled("$..[?(@.k)]").find(doc) == [
        ({"k": 1}, ("a",)),
        ({"k": 2}, ("b", 0)),
    ]


@pytest.mark.parametrize("doc", [None, True, 0, 1.5, "text", [], {}])
def test_scalars_and_empty_containers_select_nothing(doc: Any) -> None:
    for source in ("$.a", "$[0]", "$[*]", "$..a", "$..*", "$[?(@)]", "$[:]", "$.a.b"):
        assert compiled(source).find(doc) == []


def test_bool_is_not_a_number_in_filters() -> None:
    doc = [True, False, 1, 0, 1.0]
    assert compiled("$[?(@ == 1)]").values(doc) == [1, 1.0]
    assert compiled("$[?(@ != 1)]").values(doc) == [True, False, 0]
    assert compiled("$[?(@ > 0)]").values(doc) == [1, 1.0]
    assert compiled("$[?(@ == true)]").values(doc) == [True]


def test_filter_on_an_object_tests_its_member_values() -> None:
    doc = {"x": {"kind": "secret"}, "y": {"kind": "public"}, "z": "secret"}
    assert compiled("$[?(@.kind == 'secret')]").find(doc) == [({"kind": "secret"}, ("x",))]
    assert compiled("$[?(@ == 'secret')]").find(doc) == [("secret", ("z",))]


def test_filter_exists_is_true_for_null_and_false_members() -> None:
    doc = [{"a": None}, {"a": False}, {"b": 1}]
    assert compiled("$[?(@.a)]").values(doc) == [{"a": None}, {"a": False}]


def test_compiled_path_reports_itself() -> None:
    path = compiled("$.a[0]")
    assert path.is_singular
    assert path.path.source == "$.a[0]"
    assert repr(path) == "CompiledPath('$.a[0]')"
    assert not compiled("$..a").is_singular
    assert path.max_depth == DEFAULT_MAX_DEPTH == 64


# --------------------------------------------------------------------------- depth limit


def nested(levels: int) -> Any:
    """``levels`` containers deep, alternating from the top: [{"a": [{"a": ... "leaf"}]}]."""
    doc: Any = "leaf"
    for depth in range(levels, 0, -1):
        doc = [doc] if depth % 2 else {"a": doc}
    return doc


@pytest.mark.parametrize("source", ["$..a", "$..*", "$..[0]", "$..[?(@)]"])
def test_descend_accepts_payloads_up_to_max_depth(source: str) -> None:
    compiled(source).find(nested(DEFAULT_MAX_DEPTH))
    compiled(source, max_depth=5).find(nested(5))


@pytest.mark.parametrize("source", ["$..a", "$..*", "$..[0]", "$..[?(@)]", "$[0]..a"])
def test_descend_past_max_depth_raises_payload_too_deep(source: str) -> None:
    with pytest.raises(PayloadTooDeep) as caught:
        compiled(source).find(nested(DEFAULT_MAX_DEPTH + 1))
    assert caught.value.depth == DEFAULT_MAX_DEPTH + 1
    assert caught.value.max_depth == DEFAULT_MAX_DEPTH
    assert isinstance(caught.value, ValueError)
    with pytest.raises(PayloadTooDeep) as small:
        compiled(source, max_depth=5).find(nested(6))
    assert small.value.depth == 6


def test_very_deep_payloads_raise_payload_too_deep_not_recursion_error() -> None:
    deep = nested(50_000)
    with pytest.raises(PayloadTooDeep):
        compiled("$..a").find(deep)
    with pytest.raises(PayloadTooDeep):
        compiled("$..*").update(deep, lambda value, loc: "x")
    # Raising the limit makes the walk go all the way, still without recursion
    # (5000 levels: five times Python's default recursion limit).
    values = compiled("$..a", max_depth=10_000).values(nested(5000))
    assert len(values) == 2500


def test_paths_without_descend_ignore_depth() -> None:
    deep = nested(100)
    assert compiled("$[0]", max_depth=1).find(deep) == [(deep[0], (0,))]


def test_max_depth_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_depth"):
        compiled("$..a", max_depth=0)


def test_find_on_a_json_round_trip_matches_find_on_the_original() -> None:
    copy = json.loads(json.dumps(CALL))
    for source, _ in FIND:
        assert compiled(source).find(copy) == compiled(source).find(CALL)

"""Property tests: our compiled paths agree with jsonpath-ng on random documents and paths.

Paths are generated as our steps, rendered to text in one of the spellings
jsonpath-ng accepts, and parsed back with parse_path; documents are small
random JSON values whose keys come from a tiny alphabet so that paths hit.
"""

from __future__ import annotations

import copy
import functools
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonpath_ng.ext.parser import parse as _jsonpath_ng_parse
from jsonpath_ng.jsonpath import Child, Fields, Index, Root, This

from policy_engine.compiler.jsonpath import REMOVE, compile_path
from policy_engine.language import path_syntax as ps
from policy_engine.language.path_syntax import parse_path

Location = tuple[str | int, ...]
NAMES = ("a", "b", "c", "email")
REPLACEMENT = "<replaced>"  # never produced by the document strategy

# --------------------------------------------------------------------------- documents

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-2, max_value=3),
    st.sampled_from([0.5, 1.0, -1.5]),
    st.sampled_from(["", "a", "x", "it's", "a@b.c"]),
)


def containers(children: st.SearchStrategy[Any], min_size: int = 0) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.dictionaries(st.sampled_from(NAMES), children, min_size=min_size, max_size=4),
        st.lists(children, min_size=min_size, max_size=4),
    )


json_values = st.recursive(scalars, containers, max_leaves=25)

# Hand-made documents where every name occurs at several depths, in objects and
# in lists, so that random paths usually select several nodes in an order that
# matters.  Random documents cover the odd shapes.
RICH_DOCUMENTS: list[Any] = [
    {
        "a": {"a": {"email": "x", "b": [1, {"a": 2}]}, "c": [{"email": "it's"}, {"b": True}]},
        "b": [[0, 1.0, "a"], {"a": None, "c": {"a": {"email": ""}}}, -1.5],
        "c": {"b": {"c": [False, 3]}, "email": "a@b.c"},
        "email": {"a": [1, 2, 3], "email": {"email": "x"}},
    },
    [
        {"a": 1, "b": {"a": [{"a": 2}, {"c": "a"}]}},
        [{"email": "x"}, [{"email": "a"}, 0]],
        {"c": {"c": {"c": {"email": None}}}, "a": [True, False, 1, 0]},
        "a",
    ],
]
# Non-empty objects and arrays at the top, or there is nothing for a path to
# select (test_jsonpath_eval.py covers scalar and empty documents).
documents = st.one_of(st.sampled_from(RICH_DOCUMENTS), containers(json_values, min_size=1))

# --------------------------------------------------------------------------- paths

names = st.sampled_from(NAMES)
small_ints = st.integers(min_value=-3, max_value=3)
fields = st.lists(names, min_size=1, max_size=2).map(lambda found: ps.Field(tuple(found)))
indexes = st.lists(small_ints, min_size=1, max_size=2).map(lambda found: ps.Index(tuple(found)))
slices = st.builds(
    ps.Slice,
    st.none() | small_ints,
    st.none() | small_ints,
    st.none() | st.integers(min_value=-2, max_value=2).filter(bool),
)
literals = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-2, max_value=3),
    st.sampled_from([0.5, 1.0, -1.5]),
    st.sampled_from(["", "a", "x", "it's", 'q"r']),
)
targets = st.lists(
    st.one_of(
        names.map(lambda name: ps.Field((name,))),
        st.integers(min_value=-2, max_value=2).map(lambda i: ps.Index((i,))),
    ),
    max_size=2,
).map(tuple)
# Only the tests where jsonpath-ng and the language agree (existence, equality):
# for `!=` on a missing member and for ordering, the language's own rule is
# checked against `language_filter` below.
filters = st.one_of(
    st.builds(ps.Filter, targets, st.just("exists")),
    st.builds(ps.Filter, targets, st.just("=="), literals),
)


def step_lists(*, filter_last: bool = True, repeats: bool = True) -> st.SearchStrategy[Any]:
    """Random step tuples: 1-3 segments, each a selector, optionally after ``..``.

    ``filter_last=False`` follows a final filter with ``*``; ``repeats=False``
    leaves out what can select one location twice (several names or indexes in
    a step, two ``..``).
    """
    names_step = fields if repeats else names.map(lambda name: ps.Field((name,)))
    index_step = indexes if repeats else small_ints.map(lambda i: ps.Index((i,)))
    choices = [names_step, st.just(ps.Wildcard()), index_step, slices]
    selector = st.one_of(*choices, filters)
    # Weighted towards steps that usually select something, so that most examples
    # compare non-empty results (the rest check that both sides select nothing).
    segment = st.one_of(
        names_step.map(lambda step: (step,)),
        names_step.map(lambda step: (ps.Descend(), step)),
        st.just((ps.Wildcard(),)),
        st.just((ps.Descend(), ps.Wildcard())),
        selector.map(lambda step: (step,)),
        selector.map(lambda step: (ps.Descend(), step)),
    )
    most_descends = 2 if repeats else 1

    def join(parts: list[tuple[ps.Step, ...]]) -> tuple[ps.Step, ...]:
        steps = tuple(step for part in parts for step in part)
        if sum(isinstance(step, ps.Descend) for step in steps) > most_descends:
            # Keep the first `..` only.
            first = next(i for i, step in enumerate(steps) if isinstance(step, ps.Descend))
            steps = steps[: first + 1] + tuple(
                step for step in steps[first + 1 :] if not isinstance(step, ps.Descend)
            )
        if not filter_last and isinstance(steps[-1], ps.Filter):
            steps += (ps.Wildcard(),)
        return steps

    return st.lists(segment, min_size=1, max_size=3).map(join)


def quote(text: str, mark: str) -> str:
    escaped = text.replace("\\", "\\\\").replace(mark, "\\" + mark)
    return f"{mark}{escaped}{mark}"


def render_literal(value: Any, mark: str) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return quote(value, mark)
    return repr(value)


def render_target(target: tuple[ps.Step, ...], mark: str) -> str:
    text = "@"
    for step in target:
        if isinstance(step, ps.Field):
            text += f".{step.names[0]}" if mark == "." else f"[{quote(step.names[0], mark)}]"
        elif isinstance(step, ps.Index):
            text += f"[{step.indexes[0]}]"
    return text


def render_step(step: ps.Step, after_descend: bool, spelling: random.Random) -> str:
    """One of the spellings jsonpath-ng accepts for ``step`` (``..`` is written by the caller).

    The spelling comes from a seeded ``random.Random``: one hypothesis draw per
    path instead of one per choice keeps generation cheap.
    """
    dot = "" if after_descend else "."
    mark = spelling.choice(["'", '"'])
    if isinstance(step, ps.Field):
        if len(step.names) == 1 and spelling.random() < 0.5:
            return dot + step.names[0]
        return "[" + spelling.choice([",", ", "]).join(quote(n, mark) for n in step.names) + "]"
    if isinstance(step, ps.Wildcard):
        return spelling.choice([dot + "*", "[*]"])
    if isinstance(step, ps.Index):
        return "[" + spelling.choice([",", " , "]).join(map(str, step.indexes)) + "]"
    if isinstance(step, ps.Slice):
        parts = ["" if bound is None else str(bound) for bound in (step.start, step.stop)]
        if step.step is not None or spelling.random() < 0.5:
            parts.append("" if step.step is None else str(step.step))
        return "[" + ":".join(parts) + "]"
    if isinstance(step, ps.Filter):
        test = render_target(step.target, spelling.choice([".", mark]))
        if step.op != "exists":
            test += f" {step.op} {render_literal(step.value, mark)}"
        return spelling.choice([f"[?({test})]", f"[?{test}]"])
    raise AssertionError(step)


def render(steps: tuple[ps.Step, ...], seed: int) -> str:
    spelling = random.Random(seed)
    text = "$"
    after_descend = False
    for step in steps:
        if isinstance(step, ps.Descend):
            text += ".."
            after_descend = True
            continue
        text += render_step(step, after_descend, spelling)
        after_descend = False
    return text


def path_strategy(**options: bool) -> st.SearchStrategy[tuple[tuple[ps.Step, ...], str]]:
    """(steps, text) pairs; the options are those of :func:`step_lists`."""
    return st.builds(
        lambda steps, seed: (steps, render(steps, seed)),
        step_lists(**options),
        st.integers(min_value=0, max_value=2**16),
    )


paths = path_strategy()


# --------------------------------------------------------------------------- jsonpath-ng side

# Parsed once per text: hypothesis replays texts while shrinking, and each
# property uses the parsed path two or three times.
jsonpath_ng_parse = functools.lru_cache(maxsize=4096)(_jsonpath_ng_parse)


def location_of(datum: Any, doc: Any) -> Location:
    """jsonpath-ng's ``full_path`` as our location tuple, negative indexes normalized."""
    keys: list[str | int] = []
    stack = [datum.full_path]
    while stack:
        node = stack.pop()
        if isinstance(node, Child):
            stack.extend((node.right, node.left))
        elif isinstance(node, Fields):
            (name,) = node.fields
            keys.append(name)
        elif isinstance(node, Index):
            (index,) = node.indices
            keys.append(index)
        else:
            assert isinstance(node, Root | This), node
    location: list[str | int] = []
    value = doc
    for key in keys:
        if isinstance(key, int) and key < 0:
            key += len(value)
        location.append(key)
        value = value[key]
    return tuple(location)


def jsonpath_ng_find(text: str, doc: Any) -> list[tuple[Any, Location]]:
    return [(datum.value, location_of(datum, doc)) for datum in jsonpath_ng_parse(text).find(doc)]


def outermost(locations: list[Location]) -> set[Location]:
    """Distinct locations that are not inside another selected location."""
    unique = set(locations)
    return {loc for loc in unique if not any(loc[:size] in unique for size in range(len(loc)))}


def assert_shared_except(old: Any, new: Any, changed: set[Location]) -> None:
    """Every subtree with no change at or below it is the very same object in ``new``."""
    pending: list[tuple[Any, Any, Location]] = [(old, new, ())]
    while pending:
        old_node, new_node, here = pending.pop()
        if not any(loc[: len(here)] == here for loc in changed):
            assert new_node is old_node, here
        elif isinstance(old_node, dict) and isinstance(new_node, dict):
            pending.extend(
                (old_node[key], new_node[key], (*here, key))
                for key in old_node.keys() & new_node.keys()
            )


# --------------------------------------------------------------------------- properties

# jsonpath-ng is slow (milliseconds per find), so example counts stay modest to
# keep this file within a few seconds; hypothesis's example database replays
# earlier failures first.
SETTINGS = settings(max_examples=120, deadline=None)


@settings(max_examples=100, deadline=None)
@given(paths)
def test_rendered_paths_parse_back_to_their_steps(path: tuple[tuple[ps.Step, ...], str]) -> None:
    steps, text = path
    assert parse_path(text).steps == steps


@SETTINGS
@given(paths, documents)
def test_find_agrees_with_jsonpath_ng(path: tuple[tuple[ps.Step, ...], str], doc: Any) -> None:
    _, text = path
    ours = compile_path(parse_path(text))
    expected = jsonpath_ng_find(text, doc)
    assert ours.find(doc) == expected
    assert ours.values(doc) == [value for value, _ in expected]


@SETTINGS
@given(path_strategy(filter_last=False), documents)
def test_update_with_a_constant_agrees_with_jsonpath_ng(
    path: tuple[tuple[ps.Step, ...], str], doc: Any
) -> None:
    # No filter as the last step: jsonpath-ng's Filter.update only updates list
    # elements and ignores matching object members, unlike its own find().
    # test_jsonpath_update.py::test_filter_update_changes_object_members_too
    # pins our behaviour there.  (A filter before other steps is fine: there
    # jsonpath-ng uses find().)
    _, text = path
    before = copy.deepcopy(doc)
    new, count = compile_path(parse_path(text)).update(doc, lambda value, loc: REPLACEMENT)
    assert doc == before
    expected = jsonpath_ng_parse(text).update(copy.deepcopy(doc), REPLACEMENT)
    assert new == expected
    changed = outermost([loc for _, loc in jsonpath_ng_find(text, doc)])
    assert count == len(changed)
    assert_shared_except(doc, new, changed)
    if count == 0:
        assert new is doc


@SETTINGS
@given(path_strategy(repeats=False), documents)
def test_remove_agrees_with_jsonpath_ng_filter(
    path: tuple[tuple[ps.Step, ...], str], doc: Any
) -> None:
    # jsonpath-ng removes in place with `filter(fn, data)`.  Paths that can select
    # one location twice (`[0,-1]`, `['a','a']`, two `..`) are excluded: it then
    # removes twice, and in a list the second removal hits the element that moved
    # into the place of the first.
    _, text = path
    before = copy.deepcopy(doc)
    new, count = compile_path(parse_path(text)).update(doc, lambda value, loc: REMOVE)
    assert doc == before
    expected = jsonpath_ng_parse(text).filter(lambda value: True, copy.deepcopy(doc))
    assert new == expected
    changed = outermost([loc for _, loc in jsonpath_ng_find(text, doc)])
    assert count == len(changed)
    assert_shared_except(doc, new, changed)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(names, st.integers(-3, 3)), max_size=4), documents)
def test_set_on_singular_paths_then_find_returns_the_value(keys: list[str | int], doc: Any) -> None:
    text = "$" + "".join(f"[{key}]" if isinstance(key, int) else f".{key}" for key in keys)
    path = compile_path(parse_path(text))
    before = copy.deepcopy(doc)
    new, count = path.set(doc, REPLACEMENT)
    assert doc == before
    if count:
        assert path.values(new) == [REPLACEMENT]
    else:
        assert new is doc
        # Nothing set: either the path could not be created, or it named the value already.
        assert path.values(doc) in ([], [REPLACEMENT])
    if path.values(doc):
        assert count == 1  # an existing location is always set


# Filters on random documents rarely find a member to compare, so this property
# tests them on candidates built from the same values as the literals.
candidates = st.one_of(
    scalars,
    st.dictionaries(st.sampled_from(NAMES), scalars, max_size=3),
    st.lists(scalars, max_size=3),
)
filter_documents = st.one_of(
    st.lists(candidates, max_size=6),
    st.dictionaries(st.sampled_from(NAMES), candidates, max_size=4),
)
shallow_filters = st.builds(
    ps.Filter,
    st.sampled_from([(), (ps.Field(("a",)),), (ps.Field(("email",)),), (ps.Index((0,)),)]),
    st.sampled_from(["exists", "==", "!=", "<", "<=", ">", ">="]),
    literals,
).map(lambda f: ps.Filter(f.target, f.op, None) if f.op == "exists" else f)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _json_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if _number(a) and _number(b):
        return bool(a == b)
    return type(a) is type(b) and a == b


def language_holds(op: str, value: Any, literal: Any) -> bool:
    """docs/language.md, "Comparisons": JSON equality, `!=` its negation for a present
    value, ordering between two numbers only (a missing value is handled by the caller)."""
    if op == "==":
        return _json_equal(value, literal)
    if op == "!=":
        return not _json_equal(value, literal)
    if not (_number(value) and _number(literal)):
        return False
    return {"<": value < literal, "<=": value <= literal, ">": value > literal}.get(
        op, value >= literal
    )


_ABSENT = object()


def language_filter(step: ps.Filter, doc: Any) -> list[tuple[Any, Location]]:
    """The elements (or members) of ``doc`` that pass ``step``, written from the docs."""
    pairs = list(doc.items()) if isinstance(doc, dict) else list(enumerate(doc))
    out = []
    for key, candidate in pairs:
        value = candidate
        for target in step.target:
            part = target.names[0] if isinstance(target, ps.Field) else target.indexes[0]
            if (isinstance(part, str) and isinstance(value, dict) and part in value) or (
                isinstance(part, int)
                and isinstance(value, list)
                and -len(value) <= part < len(value)
            ):
                value = value[part]
            else:
                value = _ABSENT
                break
        if step.op == "exists":
            passes = value is not _ABSENT
        else:  # a missing value makes every comparison false, `!=` too
            passes = value is not _ABSENT and language_holds(step.op, value, step.value)
        if passes:
            out.append((candidate, (key,)))
    return out


@settings(max_examples=150, deadline=None)
@given(shallow_filters, filter_documents, st.integers(min_value=0, max_value=2**16))
def test_filter_comparisons_follow_the_language(step: ps.Filter, doc: Any, seed: int) -> None:
    text = render((step,), seed)
    assert parse_path(text).steps == (step,)
    assert compile_path(parse_path(text)).find(doc) == language_filter(step, doc)


# --------------------------------------------------------------------------- exhaustive tables

FILTER_VALUES: list[Any] = [None, True, False, 0, 1, -2, 0.5, 1.0, "", "a", "x", "1", [1], {"a": 1}]
FILTER_DOCUMENT: list[Any] = (
    FILTER_VALUES
    + [{"a": value} for value in FILTER_VALUES]
    + [[value] for value in FILTER_VALUES]
    + [{"b": 1}, []]
)
FILTER_LITERALS = ["null", "true", "false", "0", "1", "-2", "0.5", "1.0", "''", "'a'", "'1'"]


@pytest.mark.parametrize("target", ["@", "@.a", "@[0]"])
@pytest.mark.parametrize("op", ["==", "!=", "<", "<=", ">", ">="])
def test_every_comparison_of_every_kind_follows_the_language(target: str, op: str) -> None:
    """Every operator, literal kind and value kind (null, bool, number, string, container)."""
    for literal in FILTER_LITERALS:
        text = f"$[?({target} {op} {literal})]"
        (step,) = parse_path(text).steps
        assert isinstance(step, ps.Filter)
        ours = compile_path(parse_path(text)).find(FILTER_DOCUMENT)
        assert ours == language_filter(step, FILTER_DOCUMENT), text
    text = f"$[?({target})]"
    assert compile_path(parse_path(text)).find(FILTER_DOCUMENT) == jsonpath_ng_find(
        text, FILTER_DOCUMENT
    )


BOUNDS = ["", "-4", "-3", "-1", "0", "1", "2", "4"]


@pytest.mark.parametrize("step", ["", "1", "2", "3", "-1", "-2", "-3"])
def test_every_slice_agrees_with_jsonpath_ng(step: str) -> None:
    lists = [list(range(size)) for size in range(5)]
    for start in BOUNDS:
        for stop in BOUNDS:
            text = f"$[{start}:{stop}:{step}]" if step else f"$[{start}:{stop}]"
            path = compile_path(parse_path(text))
            for doc in lists:
                assert path.find(doc) == jsonpath_ng_find(text, doc), (text, doc)

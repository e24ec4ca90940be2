"""parse_path and format_location: the steps each path becomes, and the errors people see."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policy_engine.language.path_syntax import (
    Descend,
    Field,
    Filter,
    Index,
    PathSyntax,
    PathSyntaxError,
    Slice,
    Step,
    Wildcard,
    format_location,
    parse_path,
)

ROOT = Path(__file__).resolve().parents[2]
STAR = Wildcard()
DOWN = Descend()


def f(*names: str) -> Field:
    return Field(names)


def i(*indexes: int) -> Index:
    return Index(indexes)


ACCEPTED: list[tuple[str, tuple[Step, ...]]] = [
    ("$", ()),
    ("  $  ", ()),
    ("$.a", (f("a"),)),
    ("$ . a", (f("a"),)),
    ("$['a']", (f("a"),)),
    ('$["a"]', (f("a"),)),
    ("$['a b']", (f("a b"),)),
    ("$.'a b'", (f("a b"),)),
    ("$['']", (f(""),)),
    ("$['it\\'s']", (f("it's"),)),
    ('$["say \\"hi\\""]', (f('say "hi"'),)),
    ("$.true", (f("true"),)),
    ("$.null", (f("null"),)),
    ("$.content-type", (f("content-type"),)),
    ("$.@type", (f("@type"),)),
    ("$['where']", (f("where"),)),
    ("$.arguments.query", (f("arguments"), f("query"))),
    ('$["a","b"]', (f("a", "b"),)),
    ("$['a', 'b', 'a']", (f("a", "b", "a"),)),
    ("$.*", (STAR,)),
    ("$[*]", (STAR,)),
    ("$.a.*.b", (f("a"), STAR, f("b"))),
    ("$[0]", (i(0),)),
    ("$[-1]", (i(-1),)),
    ("$[0,2]", (i(0, 2),)),
    ("$[ 0 , -2 ]", (i(0, -2),)),
    ("$.content[0].text", (f("content"), i(0), f("text"))),
    ("$[1:3]", (Slice(1, 3, None),)),
    ("$[:2]", (Slice(None, 2, None),)),
    ("$[1:]", (Slice(1, None, None),)),
    ("$[:]", (Slice(None, None, None),)),
    ("$[::2]", (Slice(None, None, 2),)),
    ("$[::-1]", (Slice(None, None, -1),)),
    ("$[-3:-1:1]", (Slice(-3, -1, 1),)),
    ("$..email", (DOWN, f("email"))),
    ("$..['email']", (DOWN, f("email"))),
    ("$..['a','b']", (DOWN, f("a", "b"))),
    ("$..*", (DOWN, STAR)),
    ("$..[*]", (DOWN, STAR)),
    ("$..[0]", (DOWN, i(0))),
    ("$..[0:2]", (DOWN, Slice(0, 2, None))),
    ("$.a..b.c", (f("a"), DOWN, f("b"), f("c"))),
    ("$..a[0]", (DOWN, f("a"), i(0))),
    ("$..a..b", (DOWN, f("a"), DOWN, f("b"))),
    ("$[?(@.x)]", (Filter((f("x"),), "exists"),)),
    ("$[?(@.x == 1)]", (Filter((f("x"),), "==", 1),)),
    ("$[?@.x != 'a']", (Filter((f("x"),), "!=", "a"),)),
    ("$[?(@.x < 1.5)]", (Filter((f("x"),), "<", 1.5),)),
    ("$[?(@.x <= -2)]", (Filter((f("x"),), "<=", -2),)),
    ("$[?(@.x > -0.5)]", (Filter((f("x"),), ">", -0.5),)),
    ("$[?(@.x >= 0)]", (Filter((f("x"),), ">=", 0),)),
    ("$[?(@.x == true)]", (Filter((f("x"),), "==", True),)),
    ("$[?(@.x == false)]", (Filter((f("x"),), "==", False),)),
    ("$[?(@.x == null)]", (Filter((f("x"),), "==", None),)),
    ("$[?(@.x == 'true')]", (Filter((f("x"),), "==", "true"),)),
    ("$[?(@.x == 'it\\'s')]", (Filter((f("x"),), "==", "it's"),)),
    ("$[?(@ == 'secret')]", (Filter((), "==", "secret"),)),
    ("$[?(@['a b'] == 1)]", (Filter((f("a b"),), "==", 1),)),
    ("$[?(@.a.b[0] > 1)]", (Filter((f("a"), f("b"), i(0)), ">", 1),)),
    ("$[?(@[-1] == 1)]", (Filter((i(-1),), "==", 1),)),
    (
        "$.content[?(@.type == 'text')].text",
        (f("content"), Filter((f("type"),), "==", "text"), f("text")),
    ),
    ("$..[?(@.email)]", (DOWN, Filter((f("email"),), "exists"))),
    (
        "$[?(@.a)][?(@.b)]",
        (Filter((f("a"),), "exists"), Filter((f("b"),), "exists")),
    ),
]


@pytest.mark.parametrize(("source", "steps"), ACCEPTED, ids=[s for s, _ in ACCEPTED])
def test_accepted_paths_become_these_steps(source: str, steps: tuple[Step, ...]) -> None:
    parsed = parse_path(source)
    assert parsed == PathSyntax(source, steps)


# (source, message, column, a fragment of the help or None for no help)
REJECTED: list[tuple[str, str, int | None, str | None]] = [
    ("", "empty path", 0, "write `$`"),
    ("   ", "empty path", 0, "write `$`"),
    ("a.b", "paths must start with `$`", 0, "write `$.a.b`"),
    (".a", "paths must start with `$`", 0, "write `$.a`"),
    ("[0]", "paths must start with `$`", 0, "write `$[0]`"),
    ("@.a", "paths must start with `$`", 0, "`@` is the current item"),
    ("($.a).b", "paths must start with `$`", 0, "start the path with `$`"),
    ("$$", "unexpected `$` in path", 1, "paths may use names"),
    ("$a", "unexpected `a` in path", 1, "separate names with a dot: .a"),
    ("$['a' 'b']", "unexpected `'b'` in path", 6, "paths may use names"),
    ("$.a.", "path ends unexpectedly", 4, "add a name or `*` after the dot"),
    ("$..", "path ends unexpectedly", 3, "add a name or `*` after the dot"),
    ("$.a[", "path ends unexpectedly", 4, "close the bracket"),
    ("$.a[?]", "unexpected `]` in path", 5, "paths may use names"),
    ("$['a", "unterminated quoted name or string", 2, "close the quote"),
    ("$['a', \"b", "unterminated quoted name or string", 7, "close the quote"),
    ("$.^", "unexpected character `^` in path", 2, "parent selectors are not supported"),
    ("$.a\n", "control characters", 3, "one line"),
    ("$.a.$.b", "`$` may only start a path", 4, "remove the inner `$`"),
    ("$.@", "unsupported JSONPath construct `@`", 2, "only valid inside a filter"),
    ("$.`this`", "unsupported JSONPath construct `this`", 2, "backquoted operators"),
    ("`this`", "unsupported JSONPath construct `this`", 0, "backquoted operators"),
    ("$.a.`len`", "unsupported JSONPath construct `len`", 4, "backquoted operators"),
    ("$.a.`sorted`", "unsupported JSONPath construct `sorted`", 4, "backquoted operators"),
    ("$.a.`parent`", "unsupported JSONPath construct `parent`", 4, "backquoted operators"),
    ("$.where", "unsupported JSONPath construct `where`", 2, "$['where']"),
    ("$.a where $.b", "unsupported JSONPath construct `where`", 4, "[?(@.name"),
    ("$.a wherenot $.b", "unsupported JSONPath construct `wherenot`", 4, "!="),
    ("$.a | $.b", "unsupported JSONPath construct `|`", 4, "$['a','b']"),
    ("$.a & $.b", "unsupported JSONPath construct `&`", 4, "one rule per condition"),
    ("$.a + 1", "unsupported JSONPath construct `+`", 4, "arithmetic"),
    ("$.a - 1", "unsupported JSONPath construct `-`", 4, "arithmetic"),
    ("$.a / 2", "unsupported JSONPath construct `/`", 4, "arithmetic"),
    ("$.a * 2", "unsupported JSONPath construct `*`", 4, "arithmetic"),
    ("$.*.a*2", "unsupported JSONPath construct `*`", 5, "arithmetic"),
    ("$[/a]", "unsupported JSONPath construct `[/...] sorting`", 2, "sorting"),
    ("$[?(@.x =~ 'a.*')]", "unsupported JSONPath construct `=~`", 8, "matches /re/"),
    ("$[?(@.x = 1)]", "`=` is not a comparison", 8, "use `==`"),
    ("$[?(@.x == foo)]", "unquoted word `foo` in a filter", 11, "'foo'"),
    ("$[?(@.x == 1 && @.y)]", "unsupported JSONPath construct `&&`", 13, "with `and`"),
    ("$[?(@.x || @.y)]", "unsupported JSONPath construct `||`", 8, "with `or`"),
    ("$[?(@ > 1 & @ < 3)]", "unsupported JSONPath construct `&`", 10, "with `and`"),
    ("$[?(!@.x)]", "unsupported JSONPath construct `!`", 4, "with `not`"),
    ("$[?(@.x == $.y)]", "unsupported JSONPath construct `comparison with a path`", 8, "literal"),
    ("$[?(x == 1)]", "a filter test must start with `@`", 1, "[?(@.name"),
    ("$[?($.x == 1)]", "a filter test must start with `@`", 1, "[?(@.name"),
    ("$[?(@..x)]", "unsupported JSONPath construct `non-singular filter test`", 2, "@.name"),
    ("$[0:2:0]", "slice step cannot be 0", 6, "omit the step"),
]


@pytest.mark.parametrize(
    ("source", "message", "column", "help_fragment"), REJECTED, ids=[r[0] for r in REJECTED]
)
def test_rejected_paths_explain_what_and_where(
    source: str, message: str, column: int | None, help_fragment: str | None
) -> None:
    with pytest.raises(PathSyntaxError) as caught:
        parse_path(source)
    error = caught.value
    assert error.message.startswith(message), error.message
    assert str(error) == error.message
    assert error.column == column
    if help_fragment is None:
        assert error.help is None
    else:
        assert error.help is not None and help_fragment in error.help, error.help


def test_path_syntax_error_is_a_value_error_with_its_fields() -> None:
    error = PathSyntaxError("bad", column=3, help="fix it")
    assert isinstance(error, ValueError)
    assert (error.message, error.column, error.help) == ("bad", 3, "fix it")
    assert "column=3" in repr(error)


def test_errors_do_not_chain_jsonpath_ng_exceptions() -> None:
    """What reaches a policy author is ours alone, with no ply/jsonpath-ng cause attached."""
    for source in ("$a", "$.a.", "$['a", "$.^"):
        with pytest.raises(PathSyntaxError) as caught:
            parse_path(source)
        assert caught.value.__cause__ is None
        assert caught.value.__suppress_context__


def test_slice_with_step_zero_only_rejects_the_step() -> None:
    assert parse_path("$[0:0]").steps == (Slice(0, 0, None),)
    assert parse_path("$[0:2:1]").steps == (Slice(0, 2, 1),)


def test_singular_paths() -> None:
    assert parse_path("$.a[0].b").is_singular
    assert parse_path("$").is_singular
    assert not parse_path("$.a[0,1]").is_singular
    assert not parse_path("$..a").is_singular
    assert not parse_path("$['a','b']").is_singular


# --------------------------------------------------------------------------- format_location

LOCATIONS: list[tuple[tuple[str | int, ...], str]] = [
    ((), "$"),
    (("arguments", "query"), "arguments.query"),
    (("content", 0, "text"), "content[0].text"),
    ((0,), "[0]"),
    ((0, "a"), "[0].a"),
    (("a b",), "['a b']"),
    (("x", "a b", 2), "x['a b'][2]"),
    (("it's",), "['it\\'s']"),
    (("back\\slash",), "['back\\\\slash']"),
    (("1",), "['1']"),
    (("",), "['']"),
    (("content-type",), "['content-type']"),
    (("where",), "['where']"),
    (("_private", "A9"), "_private.A9"),
    (("café",), "['café']"),
]


@pytest.mark.parametrize(("location", "text"), LOCATIONS, ids=[t for _, t in LOCATIONS])
def test_format_location(location: tuple[str | int, ...], text: str) -> None:
    assert format_location(location) == text


def _as_path(location: tuple[str | int, ...]) -> str:
    text = format_location(location)
    if text == "$":
        return text
    return "$" + text if text.startswith("[") else "$." + text


keys = st.one_of(
    st.integers(min_value=0, max_value=50),
    st.text(alphabet="ab_ 'x\\\"1-.é[]$@*", max_size=6),
    st.sampled_from(["where", "wherenot", "true", "null", "email"]),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(keys, max_size=5).map(tuple))
def test_format_location_parses_back_to_the_same_location(
    location: tuple[str | int, ...],
) -> None:
    steps = parse_path(_as_path(location)).steps
    expected = tuple(f(key) if isinstance(key, str) else i(key) for key in location)
    assert steps == expected


# --------------------------------------------------------------------------- robustness

path_text = st.text(alphabet="$.[]*?()@'\"=!<>&|,:-+/0129abz _`~^\\", max_size=24)


@settings(max_examples=300, deadline=None)
@given(st.one_of(path_text, path_text.map(lambda text: "$" + text)))
def test_any_text_parses_or_raises_path_syntax_error_only(source: str) -> None:
    """Never a raw jsonpath-ng/ply exception, never a warning (pytest turns those into errors)."""
    try:
        parsed = parse_path(source)
    except PathSyntaxError as error:
        assert error.message
        assert error.column is None or 0 <= error.column <= len(source)
    else:
        assert parsed.source == source


def test_very_long_paths_do_not_hit_the_recursion_limit() -> None:
    source = "$" + ".a" * 3000
    assert parse_path(source).steps == (f("a"),) * 3000


def test_import_and_parse_print_nothing_and_write_nothing(tmp_path: Path) -> None:
    """ply can print warnings and write parser tables; neither may happen here."""
    import jsonpath_ng

    package = Path(jsonpath_ng.__file__).parent
    before = sorted(p.name for p in package.rglob("*") if "__pycache__" not in p.parts)
    code = (
        "from policy_engine.language.path_syntax import parse_path, PathSyntaxError\n"
        "for source in ['$..email', '$[?(@.a == 1)]', '$a', '$.a.', \"$['a\", '$.^',\n"
        "               '$.`len`', '$.a | $.b', '$[?(@.x == foo)]', '$.a where $.b']:\n"
        "    try:\n"
        "        parse_path(source)\n"
        "    except PathSyntaxError:\n"
        "        pass\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    result = subprocess.run(
        [sys.executable, "-W", "always", "-c", code],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert (result.stdout, result.stderr) == ("", "")
    assert list(tmp_path.iterdir()) == []
    after = sorted(p.name for p in package.rglob("*") if "__pycache__" not in p.parts)
    assert after == before

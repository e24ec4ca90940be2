"""A check's message is split once at compile time; rendering it must equal the
one-pass substitution it replaces, on any template."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from policy_engine.compiler.validators import PLACEHOLDERS, MessageTemplate, render_message

VALUES = {
    "path": "$.a.{value}",  # a path from payload keys may itself hold a placeholder
    "event": "tools/call",
    "phase": "request",
    "interceptor": "guard",
    "value": "secret-ish",
}


def one_pass(template: str, values: dict[str, str]) -> str:
    """The reference: a character at a time, as messages were rendered before."""
    out: list[str] = []
    i = 0
    while i < len(template):
        char = template[i]
        if char in "{}" and template.startswith(char * 2, i):
            out.append(char)
            i += 2
            continue
        if char == "{":
            end = template.find("}", i + 1)
            key = template[i + 1 : end] if end > 0 else None
            if key is not None and key in values:
                out.append(values[key])
                i = end + 1
                continue
        out.append(char)
        i += 1
    return "".join(out)


_PIECES = st.sampled_from(
    ["{", "}", "{{", "}}", "a", " ", "{path}", "{value}", "{event}", "{nope}", "{phase"]
)


@given(st.lists(_PIECES, max_size=12).map("".join))
def test_rendering_equals_the_one_pass_substitution(template: str) -> None:
    parsed = MessageTemplate.parse(template, PLACEHOLDERS)
    assert parsed.render(VALUES) == one_pass(template, VALUES)
    assert render_message(template, VALUES) == one_pass(template, VALUES)
    assert parsed.keys <= PLACEHOLDERS


def test_a_substituted_path_is_never_expanded_again() -> None:
    parsed = MessageTemplate.parse("bad {path}", PLACEHOLDERS)
    assert parsed.render(VALUES) == "bad $.a.{value}"
    assert parsed.keys == {"path"}


def test_a_message_without_placeholders_is_one_piece() -> None:
    assert MessageTemplate.parse("plain {{braces}} {unknown}", PLACEHOLDERS).pieces == (
        "plain {braces} {unknown}",
    )

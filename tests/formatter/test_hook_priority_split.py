"""A `priority` line after a hook is the block's setting, not the hook's.

Statements are not separated by newlines, so the grammar alone would attach
`priority 5` on the line after `on tools/call request` to that hook.
"""

from __future__ import annotations

from policy_engine.language import ast
from policy_engine.language.formatter import format_source
from policy_engine.language.parser import parse_source


def _statements(text: str) -> tuple[ast.Statement, ...]:
    outcome = parse_source(text, "p.policy")
    assert outcome.file is not None, outcome.diagnostics
    item = outcome.file.items[0]
    assert isinstance(item, ast.Interceptor)
    return item.statements


def test_priority_on_the_hook_line_belongs_to_the_hook() -> None:
    hook = _statements("mutator m {\n  on tools/call request priority -5\n}\n")[0]
    assert hook == ast.Hook((ast.EventName("tools/call"),), "request", -5)


def test_priority_on_a_later_line_is_the_block_setting() -> None:
    statements = _statements("mutator m {\n  on tools/call both\n  priority 7\n}\n")
    assert statements == (
        ast.Hook((ast.EventName("tools/call"),), "both", None),
        ast.PrioritySetting(both=7),
    )
    assert statements[1].span.line == 3


def test_per_phase_priority_after_a_hook_parses() -> None:
    statements = _statements(
        "mutator m {\n  on tools/call both\n  priority request 1 response 2\n}\n"
    )
    assert statements[1] == ast.PrioritySetting(per_phase=(("request", 1), ("response", 2)))


def test_the_split_survives_formatting() -> None:
    text = "mutator m {\n  on tools/call both\n  priority 7\n  remove $.a\n}\n"
    formatted = format_source(text, "p.policy").text
    assert formatted == text

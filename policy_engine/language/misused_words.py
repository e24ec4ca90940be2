"""Words a new user brings from other languages, and what this one says instead.

`expect block`, `on tools/call result`, `param max: integer`, `$.path
startswith "/etc"`: each is a word the parser cannot place, and the
closest keyword by spelling is the wrong fix (`result` is closer to
`request` than to `response`). These are the words people mean, so the
syntax error names the right one and says why.
"""

from __future__ import annotations

from typing import Final

MEANT: Final[dict[str, tuple[str, str]]] = {
    # A test's expectation: `expect deny` (blocked) or `expect allow`.
    **dict.fromkeys(
        ("block", "blocked", "denied", "reject", "rejected", "refuse", "refused", "forbid"),
        ("deny", "a test expects `deny` when the message is blocked, `allow` when it passes"),
    ),
    **dict.fromkeys(
        ("allowed", "pass", "passed", "accept", "accepted", "permit", "permitted"),
        ("allow", "a test expects `allow` when the message passes, `deny` when it is blocked"),
    ),
    # A hook's phase: `request` (the `params` sent) or `response` (the `result` returned).
    **dict.fromkeys(
        ("result", "results", "reply", "output", "responses", "answer"),
        ("response", "the phases are `request` and `response`; a response carries the `result`"),
    ),
    **dict.fromkeys(
        ("params", "call", "input", "requests", "send"),
        ("request", "the phases are `request` and `response`; a request carries the `params`"),
    ),
    # A param's type.
    **dict.fromkeys(
        ("integer", "long"),
        ("int", "the types are `int`, `number`, `string`, `bool` and `list[...]` of those"),
    ),
    **dict.fromkeys(
        ("float", "double", "decimal"),
        ("number", "the types are `int`, `number`, `string`, `bool` and `list[...]` of those"),
    ),
    **dict.fromkeys(
        ("str", "text"),
        ("string", "the types are `int`, `number`, `string`, `bool` and `list[...]` of those"),
    ),
    "boolean": ("bool", "the types are `int`, `number`, `string`, `bool` and `list[...]` of those"),
}
"""A misused word: (the word meant, why)."""

INFIX_FUNCTIONS: Final[dict[str, str]] = {
    "contains": "contains",
    "startswith": "starts_with",
    "starts_with": "starts_with",
    "endswith": "ends_with",
    "ends_with": "ends_with",
    "in_domain": "in_domain",
}
"""Text tests written between their operands, as Python or SQL would: the function meant."""


def meant(word: str) -> tuple[str, str] | None:
    """The word meant by ``word`` and why, if it is a known habit from elsewhere."""
    return MEANT.get(word.lower())


def infix_function(word: str) -> str | None:
    """The text test ``word`` names (`startsWith` is `starts_with`), if any."""
    return INFIX_FUNCTIONS.get(word.lower().replace("-", "_"))

"""W312: a `{...}` in a rule's message that is not a placeholder stays as written.

`"limit is {param.max}"` reads as if the param's value were filled in, but
messages fill only the placeholders below; anything else reaches the client
literally. The warning says which names exist and how to write braces.
"""

from __future__ import annotations

from collections.abc import Iterator

from . import ast
from .codes import Code
from .diagnostics import Diagnostic
from .model import ResolvedInterceptor

MESSAGE_PLACEHOLDERS = frozenset({"path", "event", "phase", "interceptor", "value"})
"""What a rule's message may name in braces; the compiler fills exactly these."""


def unfilled_placeholders(message: str) -> list[str]:
    """Each `{name}` of ``message`` the compiler leaves as written (`{{`/`}}` are braces)."""
    found: list[str] = []
    i = 0
    while i < len(message):
        if message.startswith(("{{", "}}"), i):
            i += 2
            continue
        if message[i] == "{":
            end = message.find("}", i + 1)
            if end < 0:
                break
            key = message[i + 1 : end]
            if key not in MESSAGE_PLACEHOLDERS:
                found.append(key)
            i = end + 1
            continue
        i += 1
    return found


def lint_message_placeholders(interceptor: ResolvedInterceptor) -> Iterator[Diagnostic]:
    """Check and list rules (flow rules fill their own names: `{source}`, `{server}`)."""
    for rule in interceptor.rules:
        if not isinstance(rule, ast.CheckRule | ast.ListRule) or rule.message is None:
            continue
        message = rule.message
        for key in unfilled_placeholders(message)[:1]:
            names = ", ".join(f"`{{{n}}}`" for n in sorted(MESSAGE_PLACEHOLDERS))
            hint = (
                "a param's value is not filled into messages; write its value in the text"
                if key.startswith("param.")
                else f"messages fill only {names}"
            )
            yield Diagnostic(
                Code.W312,
                f"`{{{key[:60]}}}` in this message is not a placeholder and stays as written",
                rule.span,
                f"{hint}; write `{{{{` and `}}}}` for literal braces",
            )

"""W310: a hidden character anywhere in a policy file, comments included (Trojan Source)."""

from __future__ import annotations

from collections.abc import Iterator

from .diagnostics import Code, Diagnostic, Span
from .hidden import describe, hidden_in, is_bidi, json_escape, regex_escape


def check_hidden(text: str, file: str) -> Iterator[Diagnostic]:
    """W310 for each line that holds a hidden character, comments and strings included."""
    reported: set[int] = set()
    for line, column, char in hidden_in(text):
        if line in reported:
            continue
        reported.add(line)
        what = "bidirectional control" if is_bidi(char) else "invisible or control character"
        yield Diagnostic(
            Code.W310,
            f"hidden {what} {describe(char)} in the source",
            Span(file, line, column, line, column + 1),
            "it makes the line read differently in an editor or a review than it parses"
            f" (Trojan Source); in a string write `{json_escape(char)}`, in a regex"
            f" `{regex_escape(char)}`, elsewhere remove it (`policyc fmt` writes the escapes)",
        )

"""One diagnostic type for every stage, and the renderers CI and humans read.

Messages follow one style: lowercase, no final period, user input in
backticks, one line; extra detail goes in ``help``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .codes import Code as Code
from .codes import Severity as Severity
from .hidden import visible


@dataclass(frozen=True, order=True)
class Span:
    """Where a node sits in its source: 1-based lines and columns, end exclusive."""

    file: str
    line: int
    column: int
    end_line: int
    end_column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


UNKNOWN_SPAN = Span("<unknown>", 1, 1, 1, 1)


@dataclass(frozen=True)
class Diagnostic:
    """One finding; its severity is its code's (``codes.Code``), never chosen at the call."""

    code: Code
    message: str
    span: Span
    help: str | None = None
    notes: tuple[str, ...] = field(default=())
    severity: Severity = field(init=False)

    def __post_init__(self) -> None:
        # Code[...] refuses a name outside the registry, even from untyped callers.
        code = Code[self.code]
        object.__setattr__(self, "code", code)
        object.__setattr__(self, "severity", code.severity)

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.span.file, self.span.line, self.span.column, self.code, self.message)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "code": self.code,
            "severity": str(self.severity),
            "message": visible(self.message),
            "file": self.span.file,
            "line": self.span.line,
            "column": self.span.column,
            "endLine": self.span.end_line,
            "endColumn": self.span.end_column,
        }
        if self.help:
            data["help"] = visible(self.help)
        return data


DEFAULT_CAP = 100


def sort_and_cap(
    diagnostics: Iterable[Diagnostic], cap: int = DEFAULT_CAP
) -> tuple[list[Diagnostic], int]:
    """Sorted by location, duplicates dropped, at most ``cap``; also how many were cut."""
    unique = sorted(dict.fromkeys(diagnostics), key=Diagnostic.sort_key)
    return unique[:cap], max(0, len(unique) - cap)


class SourceCache:
    """Source text per file, so renderers can quote the offending line."""

    def __init__(self) -> None:
        self._lines: dict[str, list[str]] = {}

    def add(self, file: str, text: str) -> None:
        # lark counts lines by "\n" only; splitlines() would also split on
        # U+2028 or form feeds and quote the wrong line.
        self._lines[file] = text.split("\n")

    def line(self, file: str, number: int) -> str | None:
        lines = self._lines.get(file)
        if lines is None or not 1 <= number <= len(lines):
            return None
        return lines[number - 1]


def render_text(diagnostic: Diagnostic, sources: SourceCache) -> str:
    """rustc-style: header, the source line, a caret run under the span, then help."""
    d = diagnostic
    # Messages quote names from tools snapshots and servers: a newline there
    # would start a line of its own (a CI workflow command), so none is raw.
    out = [f"{visible(str(d.span))}: {d.severity}[{d.code}]: {visible(d.message)}"]
    source_line = sources.line(d.span.file, d.span.line)
    if source_line is not None:
        gutter = str(d.span.line)
        pad = " " * len(gutter)
        width = (
            d.span.end_column - d.span.column
            if d.span.end_line == d.span.line
            else len(source_line) - d.span.column + 1
        )
        # Hidden characters are quoted as escapes, so a bidi override cannot
        # reorder the quote, and the caret moves with the wider spelling.
        shown = [visible(c) for c in source_line.expandtabs(1)]
        start = d.span.column - 1
        lead = sum(len(s) for s in shown[:start])
        width = sum(len(s) for s in shown[start : start + max(1, width)]) or width
        caret = " " * lead + "^" * max(1, width)
        out.append(f"{pad} |")
        out.append(f"{gutter} | {''.join(shown)}")
        out.append(f"{pad} | {caret}")
    for note in d.notes:
        out.append(f"  = note: {visible(note)}")
    if d.help:
        out.append(f"  = help: {visible(d.help)}")
    return "\n".join(out)


def render_github(diagnostic: Diagnostic) -> str:
    """A GitHub Actions workflow command, so problems show up inline on the PR."""
    d = diagnostic
    level = "error" if d.is_error else "warning"
    message = visible(d.message + (f" (help: {d.help})" if d.help else ""))
    message = message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return (
        f"::{level} file={_github_property(d.span.file)},line={d.span.line},col={d.span.column},"
        f"endLine={d.span.end_line},endColumn={d.span.end_column},title={d.code}::{message}"
    )


def _github_property(value: str) -> str:
    """A workflow command property: `,` and `:` end it, so they are escaped as well."""
    escaped = visible(value).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return escaped.replace(":", "%3A").replace(",", "%2C")


def render_sarif(diagnostics: Sequence[Diagnostic], rules: dict[str, str]) -> str:
    """SARIF 2.1.0, the format code-scanning dashboards ingest."""
    used = sorted({d.code for d in diagnostics})
    results = []
    for d in diagnostics:
        result: dict[str, Any] = {
            "ruleId": d.code,
            "level": "error" if d.is_error else "warning",
            "message": {
                "text": visible(d.message) + (f"\nhelp: {visible(d.help)}" if d.help else "")
            },
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": d.span.file},
                        "region": {
                            "startLine": d.span.line,
                            "startColumn": d.span.column,
                            "endLine": d.span.end_line,
                            "endColumn": d.span.end_column,
                        },
                    }
                }
            ],
        }
        results.append(result)
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "policyc",
                        "rules": [
                            {"id": code, "shortDescription": {"text": rules.get(code, code)}}
                            for code in used
                        ],
                    }
                },
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2)

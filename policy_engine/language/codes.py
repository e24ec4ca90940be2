"""The one home of every diagnostic code: its name, severity and one-line summary.

E0xx syntax and source limits, E1xx names, E2xx values and types, W3xx lints (W102-W104 are
warnings about a tools snapshot). Codes never change meaning once released. A ``Diagnostic``
takes its severity from its ``Code``, so the two cannot disagree. A new code is one line
here; the tests then ask for its docs/diagnostics.md section and its spec case.
"""

from __future__ import annotations

import re
from enum import StrEnum

DOC = "docs/diagnostics.md"


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"

    def __str__(self) -> str:
        return self.value


_ERROR = Severity.ERROR
_WARNING = Severity.WARNING


class Code(StrEnum):
    """A diagnostic code; a ``str`` equal to its name, so JSON and comparisons see ``"E204"``."""

    severity: Severity
    summary: str

    def __new__(cls, name: str, severity: Severity, summary: str) -> Code:
        member = str.__new__(cls, name)
        member._value_ = name
        member.severity = severity
        member.summary = summary
        return member

    def __str__(self) -> str:
        return self.value

    @property
    def anchor(self) -> str:
        """The GitHub anchor of this code's ``## CODE: summary`` heading in docs/diagnostics.md."""
        return re.sub(r"[^a-z0-9 -]", "", f"{self.value}: {self.summary}".lower()).replace(" ", "-")

    @property
    def doc(self) -> str:
        return f"{DOC}#{self.anchor}"

    E001 = "E001", _ERROR, "unexpected token"
    E002 = "E002", _ERROR, "bad string literal"
    E003 = "E003", _ERROR, "unexpected end of file"
    E004 = "E004", _ERROR, "unexpected character"
    E005 = "E005", _ERROR, "invalid escape in a string"
    E006 = "E006", _ERROR, "unknown statement"
    E007 = "E007", _ERROR, "unexpected top-level item"
    E008 = "E008", _ERROR, "nesting too deep"
    E009 = "E009", _ERROR, "policy file too large"
    E010 = "E010", _ERROR, "too many rules"
    E011 = "E011", _ERROR, "policy file cannot be read"
    E101 = "E101", _ERROR, "unknown event"
    E102 = "E102", _ERROR, "duplicate interceptor name"
    E103 = "E103", _ERROR, "unknown pattern"
    E104 = "E104", _ERROR, "unknown param"
    E105 = "E105", _ERROR, "duplicate definition"
    E106 = "E106", _ERROR, "unknown context field"
    E107 = "E107", _ERROR, "event name close to a standard event"
    W102 = "W102", _WARNING, "tool not in the tools snapshot"
    W103 = "W103", _WARNING, "argument not in the tool's input schema"
    W104 = "W104", _WARNING, "argument type cannot match"
    E201 = "E201", _ERROR, "regex not supported by RE2"
    E202 = "E202", _ERROR, "invalid JSONPath"
    E203 = "E203", _ERROR, "JSONPath does not fit the event payload"
    E204 = "E204", _ERROR, "type mismatch"
    E205 = "E205", _ERROR, "priority out of range"
    E206 = "E206", _ERROR, "rule not allowed in this kind of interceptor"
    E207 = "E207", _ERROR, "interceptor has no hooks"
    E208 = "E208", _ERROR, "conflicting settings"
    E209 = "E209", _ERROR, "param default does not match its type"
    E210 = "E210", _ERROR, "unknown regex flag"
    E211 = "E211", _ERROR, "expected a whole number"
    E212 = "E212", _ERROR, "rule sugar used on an event it cannot apply to"
    E213 = "E213", _ERROR, "invalid test block"
    E214 = "E214", _ERROR, "rule cannot apply to the whole payload"
    E215 = "E215", _ERROR, "guard cannot decide per element"
    E216 = "E216", _ERROR, "limit path can select several values"
    E230 = "E230", _ERROR, "tool given to two servers"
    E231 = "E231", _ERROR, "flow label never remembered"
    W301 = "W301", _WARNING, "rule can never fire"
    W302 = "W302", _WARNING, "mutators with the same priority write the same path"
    W303 = "W303", _WARNING, "audit interceptor is fail-closed"
    W304 = "W304", _WARNING, "active validator cannot block"
    W305 = "W305", _WARNING, "pattern matches the empty string"
    W306 = "W306", _WARNING, "unused definition"
    W307 = "W307", _WARNING, "priority on a validator is ignored"
    W308 = "W308", _WARNING, "pattern shadows a built-in pattern"
    W309 = "W309", _WARNING, "acknowledgement matches nothing"
    W310 = "W310", _WARNING, "hidden character in the source"
    W311 = "W311", _WARNING, "glob over URLs lets other hosts through"
    W312 = "W312", _WARNING, "brace in a message is not a placeholder"
    W313 = "W313", _WARNING, "quantifier over a context reference"
    W314 = "W314", _WARNING, "filter after a recursive wildcard skips the top level"
    W315 = "W315", _WARNING, "rule cannot fire with its params' defaults"
    W320 = "W320", _WARNING, "rule shadowed by an earlier rule"
    W321 = "W321", _WARNING, "mutator change always overwritten"
    W322 = "W322", _WARNING, "deny list covered by an allow list"
    W323 = "W323", _WARNING, "analysis stopped at its budget"
    W330 = "W330", _WARNING, "flow label remembered but never read"
    W331 = "W331", _WARNING, "server map without a flow rule"
    W332 = "W332", _WARNING, "flow rule names a server its validator does not map"
    W333 = "W333", _WARNING, "flow rule between a server and itself"
    W340 = "W340", _WARNING, "rate limit fails open"


# Name to summary, in catalogue order: what SARIF's rule table and the docs table show.
CODES: dict[str, str] = {code.value: code.summary for code in Code}

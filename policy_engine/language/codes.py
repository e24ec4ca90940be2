"""The catalogue of diagnostic codes: stable identifiers with one-line titles.

E0xx syntax, E1xx names, E2xx values and types, W3xx lints. Codes never change
meaning once released; docs/diagnostics.md explains each with an example.
"""

from __future__ import annotations

CODES: dict[str, str] = {
    "E001": "unexpected token",
    "E002": "bad string literal",
    "E003": "unexpected end of file",
    "E004": "unexpected character",
    "E005": "invalid escape in a string",
    "E006": "unknown statement",
    "E007": "unexpected top-level item",
    "E101": "unknown event",
    "E102": "duplicate interceptor name",
    "E103": "unknown pattern",
    "E104": "unknown param",
    "E105": "duplicate definition",
    "E106": "unknown context field",
    "E107": "event name close to a standard event",
    "W102": "tool not in the tools snapshot",
    "W103": "argument not in the tool's input schema",
    "W104": "argument type cannot match",
    "E201": "regex not supported by RE2",
    "E202": "invalid JSONPath",
    "E203": "JSONPath does not fit the event payload",
    "E204": "type mismatch",
    "E205": "priority out of range",
    "E206": "rule not allowed in this kind of interceptor",
    "E207": "interceptor has no hooks",
    "E208": "conflicting settings",
    "E209": "param default does not match its type",
    "E210": "unknown regex flag",
    "E211": "expected a whole number",
    "E212": "rule sugar used on an event it cannot apply to",
    "E213": "invalid test block",
    "E214": "rule cannot apply to the whole payload",
    "E215": "guard cannot decide per element",
    "W301": "rule can never fire",
    "W302": "mutators with the same priority write the same path",
    "W303": "audit interceptor is fail-closed",
    "W304": "active validator cannot block",
    "W305": "pattern matches the empty string",
    "W306": "unused definition",
    "W307": "priority on a validator is ignored",
    "W308": "pattern shadows a built-in pattern",
    "W309": "acknowledgement matches nothing",
}

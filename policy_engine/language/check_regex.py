"""Every user regex must compile under RE2, the linear-time engine policies run on.

RE2 rejects backreferences, lookaround, atomic groups and possessive
quantifiers; those get named and what to write instead suggested, rather
than RE2's terse error text.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

import re2

from . import ast
from .diagnostics import Code, Diagnostic, Span
from .path_syntax import filter_conditions
from .re2_config import ALLOWED_FLAGS, FLAG_HELP, check_options, regex_with_flags
from .walk import find


@dataclass(frozen=True)
class RegexProblem:
    code: Code
    message: str
    help: str | None


_BACKREF = (
    "RE2 guarantees linear time and has no backreferences; match the repeated "
    "text explicitly or check it with a second rule"
)
_LOOKAHEAD = (
    "RE2 has no lookaround; to require X after the match, make X part of the match "
    "(`foo(?:X)`); to check it separately, add a condition: `and $.x matches /X/`"
)
_NEGATIVE = (
    "RE2 has no lookaround; write the exclusion as its own condition: "
    "`$.x matches /foo/ and not ($.x matches /foo(?:X)/)`"
)
# (opener, what it is, what to write instead), longest openers first.
_GROUPS = (
    ("(?<=", "lookbehind", _LOOKAHEAD.replace("after", "before").replace("foo(?:X)", "(?:X)foo")),
    ("(?<!", "negative lookbehind", _NEGATIVE.replace("foo(?:X)", "(?:X)foo")),
    ("(?=", "lookahead", _LOOKAHEAD),
    ("(?!", "negative lookahead", _NEGATIVE),
    (
        "(?>",
        "atomic group",
        "RE2 never backtracks, so a plain group matches the same text: write `(?:...)`",
    ),
    ("(?P=", "named backreference", _BACKREF),
    (
        "(?(",
        "conditional group",
        "write the cases as alternatives `(?:A|B)`, or as two rules",
    ),
)


def _unsupported_construct(source: str) -> RegexProblem | None:
    i = 0
    in_class = False
    while i < len(source):
        c = source[i]
        if c == "\\" and i + 1 < len(source):
            nxt = source[i + 1]
            if not in_class and nxt.isdigit() and nxt != "0":
                return RegexProblem(
                    Code.E201,
                    f"backreference `\\{nxt}` is not supported by RE2",
                    _BACKREF,
                )
            if nxt == "k" and not in_class:
                return RegexProblem(
                    Code.E201, "named backreference is not supported by RE2", _BACKREF
                )
            if nxt == "Z" and not in_class:
                return RegexProblem(
                    Code.E201,
                    "`\\Z` is not supported by RE2",
                    "write `\\z` for the end of the text, or `$` (which is the same without `m`)",
                )
            i += 2
            continue
        if c == "[":
            in_class = True
        elif c == "]":
            in_class = False
        elif c == "(" and not in_class and source.startswith("(?", i):
            for opener, kind, instead in _GROUPS:
                if source.startswith(opener, i):
                    return RegexProblem(
                        Code.E201, f"{kind} `{opener}...)` is not supported by RE2", instead
                    )
        elif c in "*+?}" and not in_class and source.startswith("+", i + 1):
            return RegexProblem(
                Code.E201,
                f"possessive quantifier `{c}+` is not supported by RE2",
                f"RE2 never backtracks, so `{c}` alone matches the same text: drop the `+`",
            )
        i += 1
    return None


@cache
def regex_problem(source: str, flags: str) -> RegexProblem | None:
    bad = [f for f in flags if f not in ALLOWED_FLAGS]
    if bad:
        return RegexProblem(
            Code.E210,
            f"unknown regex flag `{bad[0]}`",
            FLAG_HELP,
        )
    construct = _unsupported_construct(source)
    if construct is not None:
        return construct
    try:
        re2.compile(regex_with_flags(source, flags), check_options())
    except re2.error as exc:
        reason = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else exc
        return RegexProblem(
            Code.E201,
            f"invalid regex: {reason}",
            "policies use RE2 syntax (https://github.com/google/re2/wiki/Syntax)",
        )
    return None


@cache
def matches_empty(source: str, flags: str) -> bool:
    try:
        compiled = re2.compile(regex_with_flags(source, flags), check_options())
        return compiled.fullmatch("") is not None
    except re2.error:
        return False


def check_regex(source: str, flags: str, span: Span) -> Iterator[Diagnostic]:
    problem = regex_problem(source, flags)
    if problem is not None:
        yield Diagnostic(problem.code, problem.message, span, problem.help)
    elif matches_empty(source, flags):
        yield Diagnostic(
            Code.W305,
            f"regex `/{source}/` matches the empty string",
            span,
            "use `+` instead of `*` so that it needs at least one character",
        )


def check_regexes(files: list[ast.PolicyFile]) -> Iterator[Diagnostic]:
    for policy in files:
        for regex in find(policy, ast.RegexLiteral):
            yield from check_regex(regex.source, regex.flags, regex.span)
        for path, condition in filter_conditions(policy):
            for regex in find(condition, ast.RegexLiteral):
                yield from check_regex(regex.source, regex.flags, path.span)

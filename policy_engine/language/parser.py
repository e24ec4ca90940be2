"""Stage 1 and 2: source text -> lark tree -> AST, with friendly syntax errors.

A syntax error never escapes as a lark exception: it becomes one ``E0xx``
diagnostic that says what was found, what would fit there, and, for the
mistakes people make most, how to fix it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lark import Token
from lark.exceptions import (
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)

from ..wire.suggest import closest
from . import ast
from .build_ast import AstBuildError, build
from .diagnostics import Code, Diagnostic, Span
from .grammar import TooManyRules, collecting_comments, counting_rules, parser
from .limits import SourceLimits
from .misused_words import infix_function, meant

STATEMENT_KEYWORDS = (
    "on",
    "description",
    "version",
    "mode",
    "fail",
    "priority",
    "compat",
    "param",
    "deny",
    "warn",
    "info",
    "allow",
    "limit",
    "redact",
    "mask",
    "hash",
    "set",
    "remove",
    "truncate",
    "acknowledge",
    "server",
    "remember",
)
TOP_LEVEL_KEYWORDS = ("validator", "mutator", "pattern", "test", "event")

# Human names for the terminals lark reports as expected.
_TERMINAL_WORDS = {
    "STRING": "a string",
    "NUMBER": "a number",
    "PATH": "a JSONPath such as `$.name`",
    "EVENT": "an event name such as `tools/call`",
    "NAME": "a name",
    "IDENT": "a name",
    "PATTERN_NAME": "a pattern name such as `EMAIL`",
    "REGEX": "a regex such as `/secret/i`",
    "COMPARE": "a comparison operator",
    "LBRACE": "`{`",
    "RBRACE": "`}`",
    "LSQB": "`[`",
    "RSQB": "`]`",
    "LPAR": "`(`",
    "RPAR": "`)`",
    "COMMA": "`,`",
    "COLON": "`:`",
    "EQUAL": "`=`",
    "DOT": "`.`",
    "EVENT_WORD": "`event`",
    "$END": "the end of the file",
}


@dataclass(frozen=True)
class ParseOutcome:
    file: ast.PolicyFile | None
    diagnostics: tuple[Diagnostic, ...]
    rules: int = 0
    rules_exceeded: bool = False


def parse_source(
    text: str, file: str = "<string>", limits: SourceLimits | None = None, *, rules_before: int = 0
) -> ParseOutcome:
    """Parse one file. On failure the outcome has no AST, and a diagnostic per broken block.

    ``rules_before`` rules were already read from other files of the set; the
    limit on rules counts the whole set (E010).
    """
    limits = limits or SourceLimits()
    budget = limits.max_rules - rules_before
    try:
        with collecting_comments() as comment_tokens, counting_rules(budget):
            tree = parser().parse(text)
        items = build(tree, file, limits.max_nesting)
    except TooManyRules as stopped:
        span = _token_span(file, stopped.token)
        return ParseOutcome(None, (_too_many_rules(span, limits),), rules_exceeded=True)
    except UnexpectedInput as exc:
        return ParseOutcome(None, tuple(_syntax_errors(text, file, exc)))
    except VisitError as wrapped:
        # lark wraps whatever a transformer method raises in a VisitError.
        cause = wrapped.orig_exc
        if not isinstance(cause, AstBuildError):
            raise
        return ParseOutcome(None, (Diagnostic(cause.code, cause.message, cause.span, cause.help),))
    rules = [
        s
        for item in items
        if isinstance(item, ast.Interceptor)
        for s in item.statements
        if type(s) in ast.RULE_KINDS
    ]
    if len(rules) > budget:
        return ParseOutcome(
            None, (_too_many_rules(rules[budget].span, limits),), len(rules), rules_exceeded=True
        )
    comments = tuple(
        ast.Comment(str(t).rstrip(), span=_token_span(file, t)) for t in comment_tokens
    )
    lines = text.count("\n") + 1
    span = Span(file, 1, 1, lines, 1)
    return ParseOutcome(ast.PolicyFile(file, items, comments, span=span), (), len(rules))


def _too_many_rules(span: Span, limits: SourceLimits) -> Diagnostic:
    return Diagnostic(
        Code.E010,
        f"the policy set has more than the limit of {limits.max_rules} rules",
        Span(span.file, span.line, span.column, span.line, span.column + 1),
        "split the set across servers, or raise the limit with `--max-rules`",
    )


MAX_SYNTAX_ERRORS = 10
_TOP_LEVEL_STARTS = tuple(f"{keyword} " for keyword in TOP_LEVEL_KEYWORDS)


def _syntax_errors(text: str, file: str, first: UnexpectedInput) -> list[Diagnostic]:
    """The first syntax error, then one more per other broken top-level block.

    Token-level recovery would report every token after a mistake; instead the
    block holding the error is blanked out (its lines kept, so positions stay
    right) and the rest of the file is parsed again.
    """
    found = [_syntax_diagnostic(first, text, file)]
    lines = text.split("\n")
    while len(found) < MAX_SYNTAX_ERRORS:
        block = _enclosing_block(lines, found[-1].span.line - 1, found[-1].span.column)
        if block is None:
            break
        start, end = block
        lines = lines[:start] + [""] * (end - start + 1) + lines[end + 1 :]
        blanked = "\n".join(lines)
        try:
            with collecting_comments():
                parser().parse(blanked)
        except UnexpectedInput as exc:
            more = _syntax_diagnostic(exc, blanked, file)
            if (
                any(more.span.line == d.span.line for d in found)
                or start <= more.span.line - 1 <= end
            ):
                break
            found.append(more)
        else:
            break
    return found


def _enclosing_block(lines: list[str], index: int, column: int) -> tuple[int, int] | None:
    """Lines (first, last) of the top-level block around line ``index``: from the
    closest block keyword at column 1 above it to the line before the next one.

    An error on a block keyword at column 1 (a `}` missing before it) belongs
    to the block above, which is the one left open.
    """
    index = min(index, len(lines) - 1)
    top = index - 1 if column == 1 and lines[index].startswith(_TOP_LEVEL_STARTS) else index
    start = next((i for i in range(top, -1, -1) if lines[i].startswith(_TOP_LEVEL_STARTS)), None)
    if start is None:
        return None
    following = (i for i in range(index + 1, len(lines)) if lines[i].startswith(_TOP_LEVEL_STARTS))
    end = next(following, len(lines)) - 1
    return start, end


def _token_span(file: str, token: Token) -> Span:
    line = token.line or 1
    column = token.column or 1
    return Span(file, line, column, token.end_line or line, token.end_column or column + len(token))


def _syntax_diagnostic(exc: UnexpectedInput, text: str, file: str) -> Diagnostic:
    line = getattr(exc, "line", 1) or 1
    column = getattr(exc, "column", 1) or 1
    if line < 1:
        line, column = _end_position(text)
    if isinstance(exc, UnexpectedCharacters):
        return _unexpected_character(exc, text, file, line, column)
    if isinstance(exc, UnexpectedEOF) or (
        isinstance(exc, UnexpectedToken) and exc.token.type == "$END"
    ):
        line, column = _end_position(text)
        open_line = _unclosed_brace_line(text)
        expected = _expected_words(_expected_terminals(exc))
        help_text = (
            f"add `}}` to close the block opened on line {open_line}"
            if open_line is not None
            else (f"expected {expected}" if expected else None)
        )
        message = "unexpected end of file" + (
            "; a block is not closed" if open_line is not None else ""
        )
        return Diagnostic(Code.E003, message, Span(file, line, column, line, column + 1), help_text)
    assert isinstance(exc, UnexpectedToken)
    glued = _name_glued_to_dollar(exc.token, text, file)
    if glued is not None:
        return glued
    unclosed = _block_left_open(exc, text, file)
    if unclosed is not None:
        return unclosed
    open_json = _json_left_open(exc, text, file)
    if open_json is not None:
        return open_json
    glued_word = _keyword_with_extra_letters(exc, text, file)
    if glued_word is not None:
        return glued_word
    open_string = _string_missing_its_quote(exc.token, text, file)
    if open_string is not None:
        return open_string
    return _unexpected_token(exc, file, line, column, text)


def _word_at(text: str, start: int) -> tuple[int, int]:
    """The run of letters, digits and `_` around ``start``."""
    begin = start
    while begin > 0 and (text[begin - 1].isalnum() or text[begin - 1] == "_"):
        begin -= 1
    end = start
    while end < len(text) and (text[end].isalnum() or text[end] == "_"):
        end += 1
    return begin, end


def _keyword_with_extra_letters(exc: UnexpectedToken, text: str, file: str) -> Diagnostic | None:
    """`deny iff`: the contextual lexer reads the keyword `if`, then a stray `f`."""
    start = exc.token.start_pos
    if start is None or start < 1 or not (text[start - 1].isalnum() or text[start - 1] == "_"):
        return None
    begin, end = _word_at(text, start)
    word = text[begin:end]
    guess = closest(word, sorted(_ALL_KEYWORDS))
    line = text.count("\n", 0, begin) + 1
    column = begin - (text.rfind("\n", 0, begin) + 1) + 1
    habit = meant(word)
    if habit is not None:
        help_text: str | None = f"write `{habit[0]}`: {habit[1]}"
    else:
        help_text = f"did you mean `{guess[0]}`?" if guess else None
    return Diagnostic(
        Code.E001,
        f"unexpected `{word}`",
        Span(file, line, column, line, column + len(word)),
        help_text,
    )


def _string_missing_its_quote(token: Token, text: str, file: str) -> Diagnostic | None:
    """`["rm, "blocked"]`: a string lost its closing quote and swallowed `, "`."""
    start = token.start_pos
    if start is None or start < 2 or text[start - 1] != '"' or not str(token)[:1].isalnum():
        return None
    opening = text.rfind('"', 0, start - 1)
    if opening < 0:
        return None
    swallowed = text[opening:start]
    inner = swallowed[1:-1]
    if "," not in inner:
        return None
    first = inner.split(",")[0].rstrip()
    line = text.count("\n", 0, opening) + 1
    column = opening - (text.rfind("\n", 0, opening) + 1) + 1
    return Diagnostic(
        Code.E002,
        f"the string `{swallowed}` is missing its closing quote",
        Span(file, line, column, line, column + len(swallowed)),
        f'close it before the comma: `"{first}", "{token}"`',
    )


def _block_left_open(exc: UnexpectedToken, text: str, file: str) -> Diagnostic | None:
    """`validator`, `mutator`, `pattern` or `test` where a statement may stand: a `}` is missing."""
    token = exc.token
    if str(token) not in TOP_LEVEL_KEYWORDS or token.start_pos is None:
        return None
    if "RBRACE" not in _expected_terminals(exc):
        return None
    open_line = _unclosed_brace_line(text[: token.start_pos])
    if open_line is None:
        return None
    return Diagnostic(
        Code.E001,
        f"unexpected `{token}` inside a block",
        _token_span(file, token),
        f"add `}}` to close the block opened on line {open_line}",
    )


_CLOSERS = {"{": "}", "[": "]"}


def _innermost_open_bracket(text: str) -> tuple[int, str] | None:
    """Offset and kind of the innermost bracket ``text`` leaves open (strings, comments skipped)."""
    stack: list[tuple[int, str]] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == '"':
            index += 1
            while index < len(text) and text[index] not in '"\n':
                index += 2 if text[index] == "\\" else 1
        elif char == "#":
            while index < len(text) and text[index] != "\n":
                index += 1
        elif char in _CLOSERS:
            stack.append((index, char))
        elif char in "}]" and stack and _CLOSERS[stack[-1][1]] == char:
            stack.pop()
        index += 1
    return stack[-1] if stack else None


def _json_left_open(exc: UnexpectedToken, text: str, file: str) -> Diagnostic | None:
    """A statement keyword where a JSON value wants `,` or a closer: a bracket is left open.

    The parser only notices at the next statement, lines below; the bracket
    that is never closed is where the fix goes, so that is where this points.
    """
    token = exc.token
    expected = _expected_terminals(exc)
    if "COMMA" not in expected or not expected & {"RBRACE", "RSQB"} or token.start_pos is None:
        return None
    if not (str(token).isalpha() or str(token) in ("}", "]")) or token.line is None:
        return None
    found = _innermost_open_bracket(text[: token.start_pos])
    if found is None:
        return None
    offset, bracket = found
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    if line >= token.line:
        return None
    closer = _CLOSERS[bracket]
    return Diagnostic(
        Code.E001,
        f"this `{bracket}` is never closed",
        Span(file, line, column, line, column + 1),
        f"add `{closer}` to close it before `{token}` on line {token.line}",
    )


def _name_glued_to_dollar(token: Token, text: str, file: str) -> Diagnostic | None:
    """`$name`: the lexer reads a bare `$` path, then a name it cannot place."""
    start = token.start_pos
    if (
        token.type not in {"NAME", "IDENT", "EVENT", "PATTERN_NAME"}
        or start is None
        or start < 1
        or text[start - 1] != "$"
    ):
        return None
    span = _token_span(file, token)
    return Diagnostic(
        Code.E004,
        f"malformed JSONPath `${token}`",
        Span(file, span.line, span.column - 1, span.end_line, span.end_column),
        f"write `$.{token}`; a path looks like `$.field`, `$..field`, `$.list[*].field` "
        "or `$['odd key']`",
    )


def _expected_terminals(exc: UnexpectedInput) -> set[str]:
    """The terminals the parser really accepts where it stopped.

    LALR's own set for the state also holds lookaheads merged in from other
    contexts (after a string it offers `if`, which only fits a mutator's
    guard), so each candidate is tried on a copy of the parser instead.
    """
    interactive = getattr(exc, "interactive_parser", None)
    if interactive is not None:
        return {str(t) for t in interactive.accepts()}
    return {str(t) for t in getattr(exc, "expected", None) or getattr(exc, "allowed", None) or ()}


def _unexpected_character(
    exc: UnexpectedCharacters, text: str, file: str, line: int, column: int
) -> Diagnostic:
    pos = exc.pos_in_stream or 0
    char = text[pos] if pos < len(text) else ""
    span = Span(file, line, column, line, column + 1)
    rest = text[pos : pos + 2]
    if char == "'":
        return Diagnostic(
            Code.E002,
            "strings use double quotes",
            span,
            "write `\"...\"` instead of `'...'`",
        )
    if char == '"':
        return Diagnostic(
            Code.E002,
            "unterminated string",
            span,
            'close the string with `"` on the same line',
        )
    if rest in ("&&", "||"):
        word = "and" if rest == "&&" else "or"
        return Diagnostic(
            Code.E004,
            f"unexpected `{rest}`",
            Span(file, line, column, line, column + 2),
            f"use `{word}` to combine conditions",
        )
    if char == "!":
        return Diagnostic(
            Code.E004,
            "unexpected `!`",
            span,
            "use `not` to negate a condition, and `!=` to compare",
        )
    if char == "=":
        return Diagnostic(
            Code.E004,
            "unexpected `=`",
            span,
            "use `==` to compare; a single `=` only appears in `set`, `param` and `pattern`",
        )
    if char == "$":
        return Diagnostic(
            Code.E004,
            "malformed JSONPath",
            span,
            "a path looks like `$.field`, `$..field`, `$.list[*].field` or `$['odd key']`",
        )
    shown = char.encode("unicode_escape").decode() if char else "end of input"
    expected = _expected_words(_expected_terminals(exc))
    return Diagnostic(
        Code.E004,
        f"unexpected character `{shown}`",
        span,
        f"expected {expected}" if expected else None,
    )


def _unexpected_token(
    exc: UnexpectedToken, file: str, line: int, column: int, text: str = ""
) -> Diagnostic:
    token = exc.token
    value = str(token)
    span = _token_span(file, token)
    expected_terms = _expected_terminals(exc)
    expected = _expected_words(expected_terms)
    keywords = {t.lower() for t in expected_terms if t.isupper() and t.lower() in _ALL_KEYWORDS}
    if "RBRACE" in expected_terms and token.type in {"NAME", "IDENT", "EVENT", "PATTERN_NAME"}:
        candidates = [k for k in STATEMENT_KEYWORDS if k.upper() in expected_terms] or list(
            STATEMENT_KEYWORDS
        )
        # A clause keyword that fits here (`with`, `matching`, `if`...) is the
        # likelier fix for a typo right after a rule than a new statement.
        clauses = [
            t.lower()
            for t in sorted(expected_terms)
            if t.isalpha() and t.lower() in _ALL_KEYWORDS and t.lower() not in STATEMENT_KEYWORDS
        ]
        clause_guess = closest(value, clauses)
        if clause_guess:
            return Diagnostic(
                Code.E001,
                f"unexpected `{value}`",
                span,
                f"did you mean `{clause_guess[0]}`?",
            )
        guess = closest(value, candidates)
        return Diagnostic(
            Code.E006,
            f"unknown statement `{value}`",
            span,
            f"did you mean `{guess[0]}`?"
            if guess
            else f"a statement starts with one of: {', '.join(candidates)}",
        )
    if token.type == "EQUAL" and "COMPARE" in expected_terms:
        return Diagnostic(Code.E004, "unexpected `=`", span, "use `==` to compare")
    if (
        "STRING" in expected_terms
        and token.type in {"NAME", "IDENT", "EVENT", "PATTERN_NAME"}
        and len(expected_terms) <= 3
    ):
        return Diagnostic(
            Code.E001,
            f"expected a string, found `{value}`",
            span,
            f'put text in double quotes: `"{value}"`',
        )
    if not expected_terms - {"VALIDATOR", "MUTATOR", "PATTERN", "TEST", "EVENT_WORD", "$END"}:
        guess = closest(value, TOP_LEVEL_KEYWORDS)
        return Diagnostic(
            Code.E007,
            f"unexpected `{value}` at the top level",
            span,
            f"did you mean `{guess[0]}`?"
            if guess
            else "a file holds `validator`, `mutator`, `pattern` and `test` blocks",
        )
    found = "end of file" if token.type == "$END" else f"`{value}`"
    habit = _habit(exc, value, expected_terms, text)
    if habit is not None:
        return Diagnostic(Code.E001, f"unexpected {found}", span, habit)
    help_text = f"expected {expected}" if expected else None
    # A misspelt word where only words fit (`per minuts`, `limit rat`).
    words = [t.lower() for t in sorted(expected_terms) if t.isalpha() and t not in _TERMINAL_WORDS]
    word_guess = closest(value, words) if token.type != "$END" else []
    if word_guess:
        help_text = f"did you mean `{word_guess[0]}`?"
    elif (
        "STRING" in expected_terms
        and token.type in {"NAME", "IDENT", "EVENT", "PATTERN_NAME"}
        and value.lower() not in _ALL_KEYWORDS
    ):
        help_text = f'a string is written in double quotes: `"{value}"`'
    if keywords and not help_text:
        help_text = f"expected one of: {', '.join(sorted(keywords))}"
    return Diagnostic(Code.E001, f"unexpected {found}", span, help_text)


def _habit(exc: UnexpectedToken, value: str, expected: set[str], text: str) -> str | None:
    """The fix for a word or form from another language (``misused_words``), if it is one."""
    habit = meant(value)
    if habit is not None and habit[0].upper() in expected:
        return f"write `{habit[0]}`: {habit[1]}"
    function = infix_function(value)
    if function is not None and "COMPARE" in expected:
        subject, argument = _operands_around(exc, text)
        return (
            f"`{function}` is a function, not an operator: write "
            f"`{function}({subject}, {argument})`"
        )
    if exc.token.type == "STRING" and "REGEX" in expected:
        body = value[1:-1].replace("/", "\\/")
        return f"a regex is written between slashes, not quotes: `/{body}/`"
    return None


def _operands_around(exc: UnexpectedToken, text: str) -> tuple[str, str]:
    """The operand written before an infix word and the one after it, as the user wrote them."""
    start = exc.token.start_pos or 0
    end = exc.token.end_pos or start
    before = re.search(r"(\S+)\s*$", text[:start].split("\n")[-1]) if text else None
    after = re.match(r"\s*(\"(?:[^\"\\\n]|\\.)*\"|\S+)", text[end:]) if text else None
    return (
        before.group(1) if before else "SUBJECT",
        after.group(1) if after else '"TEXT"',
    )


_ALL_KEYWORDS = (
    set(STATEMENT_KEYWORDS)
    | set(TOP_LEVEL_KEYWORDS)
    | {
        "if",
        "unless",
        "and",
        "or",
        "not",
        "in",
        "like",
        "matches",
        "is",
        "exists",
        "missing",
        "any",
        "all",
        "with",
        "matching",
        "keep",
        "to",
        "request",
        "response",
        "both",
        "code",
        "expect",
        "given",
        "context",
        "config",
        "only",
        "side",
        "true",
        "false",
        "null",
    }
)


# `@` paths are only valid inside a path filter, never where the parser of a rule stops.
_HIDDEN_TERMINALS = frozenset({"ELEMENT_PATH"})


def _expected_words(terminals: set[str]) -> str:
    words: list[str] = []
    # Where a statement may end, every statement keyword would fit next; naming
    # them all would push the continuations that matter (`and`, a message, `}`)
    # out of the list, so they are summed up as one phrase at the end.
    starts = {k.upper() for k in STATEMENT_KEYWORDS} & terminals
    next_statement = "RBRACE" in terminals and len(starts) >= 5
    if next_statement:
        terminals = terminals - starts
    # After an operand `not` only starts `not in`, `not like` and `not matches`.
    negations = "NOT" in terminals and bool({"IN", "LIKE", "MATCHES"} & terminals)
    for name in sorted(terminals - _HIDDEN_TERMINALS):
        if name == "NOT" and negations:
            words += [w for w in ("`not in`", "`not like`", "`not matches`") if w not in words]
            continue
        if name in _TERMINAL_WORDS:
            word = _TERMINAL_WORDS[name]
        elif name.isupper() and name.lower() in _ALL_KEYWORDS:
            word = f"`{name.lower()}`"
        elif name.startswith("__ANON") or name.startswith("_"):
            continue
        else:
            word = f"`{name.lower()}`"
        if word not in words:
            words.append(word)
    if next_statement:
        words.append("a new statement")
    if not words:
        return ""
    if len(words) > 8:
        return ", ".join(words[:8]) + ", ..."
    return " or ".join(words) if len(words) <= 2 else ", ".join(words[:-1]) + " or " + words[-1]


def _end_position(text: str) -> tuple[int, int]:
    """Just after the last non-blank character, so the caret lands on a line that exists."""
    lines = text.rstrip().split("\n")
    return len(lines), len(lines[-1]) + 1


def _starts_regex(text: str, at: int) -> bool:
    """A `/` opens a regex after `matches`, `matching`, `=`, `,` or `(`; elsewhere it is
    part of an event name such as `tools/call`."""
    before = text[:at].rstrip()
    if before.endswith(("=", ",", "(")):
        return True
    begin, end = _word_at(before, len(before))
    return before[begin:end] in ("matches", "matching")


def _regex_end(text: str, at: int) -> int:
    """Just after the regex opened at ``at`` (its flags included), or at the line's end."""
    i = at + 1
    while i < len(text) and text[i] != "\n":
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "/":
            return i + 1
        i += 1
    return i


def _unclosed_brace_line(text: str) -> int | None:
    """The line of the innermost `{` left open, skipping strings, regexes and comments."""
    stack: list[int] = []
    line = 1
    i = 0
    in_string = in_comment = False
    while i < len(text):
        c = text[i]
        if c == "\n":
            line += 1
            in_comment = in_string = False
        elif in_comment:
            pass
        elif in_string:
            if c == "\\":
                i += 1
            elif c == '"':
                in_string = False
        elif c == "#":
            in_comment = True
        elif c == '"':
            in_string = True
        elif c == "/" and _starts_regex(text, i):
            i = _regex_end(text, i)
            continue
        elif c == "{":
            stack.append(line)
        elif c == "}" and stack:
            stack.pop()
        i += 1
    return stack[-1] if stack else None

"""Layout rules one at a time: parentheses, literals, blank lines, comments, payload width."""

from __future__ import annotations

import json

import pytest

from policy_engine.language import ast
from policy_engine.language.formatter import (
    MAX_WIDTH,
    FormatError,
    format_policy,
    format_source,
    render_condition,
    render_operand,
    render_rule,
)
from policy_engine.language.parser import parse_source


def fmt(text: str) -> str:
    outcome = format_source(text)
    assert outcome.text is not None, outcome.diagnostics
    return outcome.text


def validator(*body: str) -> str:
    return "validator v {\n" + "".join(f"  {line}\n" if line else "\n" for line in body) + "}\n"


def parsed_condition(text: str) -> ast.Condition:
    outcome = parse_source(f"validator v {{ deny if {text} }}")
    assert outcome.file is not None, outcome.diagnostics
    item = outcome.file.items[0]
    assert isinstance(item, ast.Interceptor)
    rule = item.statements[0]
    assert isinstance(rule, ast.CheckRule)
    return rule.condition


A = ast.Exists(ast.PathRef("$.a"))
B = ast.Exists(ast.PathRef("$.b"))
C = ast.Exists(ast.PathRef("$.c"))

# ------------------------------------------------------------- parentheses


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        (ast.Or((A, ast.And((B, C)))), "exists $.a or exists $.b and exists $.c"),
        (ast.And((A, ast.Or((B, C)))), "exists $.a and (exists $.b or exists $.c)"),
        (ast.And((ast.Or((A, B)), C)), "(exists $.a or exists $.b) and exists $.c"),
        (ast.Or((A, ast.Or((B, C)))), "exists $.a or (exists $.b or exists $.c)"),
        (ast.And((A, ast.And((B, C)))), "exists $.a and (exists $.b and exists $.c)"),
        (ast.Not(A), "not exists $.a"),
        (ast.Not(ast.Not(A)), "not not exists $.a"),
        (ast.Not(ast.And((A, B))), "not (exists $.a and exists $.b)"),
        (ast.Not(ast.Or((A, B))), "not (exists $.a or exists $.b)"),
        (ast.And((ast.Not(A), B)), "not exists $.a and exists $.b"),
        (ast.Or((ast.Not(ast.Or((A, B))), C)), "not (exists $.a or exists $.b) or exists $.c"),
    ],
)
def test_minimum_parentheses(condition: ast.Condition, expected: str) -> None:
    assert render_condition(condition) == expected
    assert parsed_condition(expected) == condition


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("((exists $.a))", "exists $.a"),
        ("(exists $.a and exists $.b) or exists $.c", "exists $.a and exists $.b or exists $.c"),
        ("not (exists $.a)", "not exists $.a"),
        ("(exists $.a or exists $.b) or exists $.c", "exists $.a or exists $.b or exists $.c"),
    ],
)
def test_redundant_parentheses_dropped(written: str, expected: str) -> None:
    assert render_condition(parsed_condition(written)) == expected


def test_or_and_with_one_operand_cannot_be_written() -> None:
    with pytest.raises(FormatError):
        render_condition(ast.Or((A,)))
    with pytest.raises(FormatError):
        render_condition(ast.And(()))


# ----------------------------------------------------------------- operands


@pytest.mark.parametrize(
    ("operand", "expected"),
    [
        (ast.PathRef("$['a b'][*].c"), "$['a b'][*].c"),
        (ast.EventRef(), "event"),
        (ast.PhaseRef(), "phase"),
        (ast.ContextRef(("principal", "claims", "role")), "context.principal.claims.role"),
        (ast.ParamRef("limit"), "param.limit"),
        (ast.Call("lower", ast.Call("length", ast.PathRef("$.a"))), "lower(length($.a))"),
        (ast.Literal_('say "hi" \\ é\n'), '"say \\"hi\\" \\\\ é\\n"'),
        (ast.Literal_(-1000), "-1000"),
        (ast.Literal_(1.5), "1.5"),
        (ast.Literal_(1e21), "1e+21"),
        (ast.Literal_(10**21), "1000000000000000000000"),
        (ast.Literal_(2.0), "2.0"),
        (ast.Literal_(None), "null"),
        (ast.Literal_(True), "true"),
        (ast.Literal_(("a", (1, 2.5), (), False)), '["a", [1, 2.5], [], false]'),
    ],
)
def test_render_operand(operand: ast.Operand, expected: str) -> None:
    assert render_operand(operand) == expected


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_numbers_cannot_be_written(value: float) -> None:
    with pytest.raises(FormatError):
        render_operand(ast.Literal_(value))


@pytest.mark.parametrize(("written", "value"), [("1.5", 1.5), ("-1000", -1000), ("1e21", 1e21)])
def test_numbers_keep_their_kind(written: str, value: float) -> None:
    out = fmt(validator(f"set $.x = {written}"))
    rule = _only_statement(out)
    assert isinstance(rule, ast.SetValue)
    assert type(rule.value.value) is type(value)
    assert rule.value.value == value


def test_regex_slashes_are_escaped_again() -> None:
    regex = ast.RegexLiteral("https?://x/\\d+", "i")
    condition = ast.Matches(ast.PathRef("$.u"), regex)
    assert render_condition(condition) == "$.u matches /https?:\\/\\/x\\/\\d+/i"
    assert parsed_condition(render_condition(condition)) == condition


def test_regex_with_newline_cannot_be_written() -> None:
    with pytest.raises(FormatError):
        render_condition(ast.Matches(ast.PathRef("$.u"), ast.RegexLiteral("a\nb", "")))


# -------------------------------------------------------------------- rules


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        (
            ast.CheckRule("warn", A, unless=True, message="m", code="C"),
            'warn unless exists $.a "m" code C',
        ),
        (ast.ListRule("allow", "tools", ("x",)), 'allow tools ["x"]'),
        (ast.LimitRule("size", 64, unit="kb"), "limit size 64 kb"),
        (ast.LimitRule("count", 3, ast.PathRef("$.a"), code="N"), "limit count $.a 3 code N"),
        (
            ast.Mask(
                ast.PathRef("$.c"),
                (ast.PatternName("CARD"), ast.RegexLiteral("\\d", "")),
                keep=4,
                replacement="*",
                guard=ast.Guard(A, unless=True),
            ),
            'mask $.c matching CARD, /\\d/ keep 4 with "*" unless exists $.a',
        ),
        (ast.Truncate(ast.PathRef("$.t"), 10), "truncate $.t to 10"),
        (
            ast.SetValue(ast.PathRef("$.s"), ast.Literal_(("a",)), ast.Guard(B)),
            'set $.s = ["a"] if exists $.b',
        ),
    ],
)
def test_render_rule(rule: ast.Rule, expected: str) -> None:
    assert render_rule(rule) == expected


def test_like_prints_one_glob_bare_and_list_rules_always_as_list() -> None:
    out = fmt(validator('deny if $.n like ["a*"]', 'deny tools "x"'))
    assert out == validator('deny if $.n like "a*"', 'deny tools ["x"]')


def test_enforce_mode_is_not_rewritten() -> None:
    assert fmt(validator("mode enforce")) == validator("mode enforce")


def test_header_and_body_description_stay_where_they_are() -> None:
    source = 'validator v version "1" "head" {\ndescription "body"\n}'
    assert fmt(source) == 'validator v "head" version "1" {\n  description "body"\n}\n'


def test_priority_setting_forms() -> None:
    source = validator("priority 3", "priority response 2 request 1")
    assert fmt(source) == source
    with pytest.raises(FormatError):
        format_one_statement(ast.PrioritySetting())


def format_one_statement(statement: ast.Statement) -> str:
    file = ast.PolicyFile("x", (ast.Interceptor("validator", "v", (statement,)),))
    return format_policy(file)


# ------------------------------------------------------------- blank lines


def test_blank_line_runs_collapse_and_edges_are_trimmed() -> None:
    source = "\n\n\nvalidator v {\n\n\n  mode audit\n\n\n\n  fail open\n  fail closed\n\n}\n\n\n"
    assert fmt(source) == validator("mode audit", "", "fail open", "fail closed")


def test_one_blank_line_between_top_level_items() -> None:
    source = 'pattern A = /a/ pattern B = /b/\n\n\n\ntest "t" {}'
    assert fmt(source) == 'pattern A = /a/\n\npattern B = /b/\n\ntest "t" {}\n'


def test_statements_on_one_line_are_split() -> None:
    assert fmt("validator v { mode audit fail open }") == validator("mode audit", "fail open")


def test_empty_file_formats_to_empty_text() -> None:
    assert fmt("") == ""
    assert fmt("\n\n  \n") == ""


def test_tree_without_spans_has_no_blank_lines_inside_blocks() -> None:
    statements = (ast.ModeSetting("audit"), ast.FailSetting(True))
    file = ast.PolicyFile("x", (ast.Interceptor("mutator", "m", statements),))
    assert format_policy(file) == "mutator m {\n  mode audit\n  fail open\n}\n"


# ----------------------------------------------------------------- comments


def test_trailing_comment_keeps_two_spaces_and_exact_text() -> None:
    source = "validator v {\n  mode audit     #tight   \n}\n"
    assert fmt(source) == validator("mode audit  #tight")


def test_own_line_comment_leads_the_next_statement() -> None:
    source = "validator v {\n  mode audit\n      # about fail\n  fail open\n}"
    assert fmt(source) == validator("mode audit", "# about fail", "fail open")


def test_comment_inside_a_statement_moves_above_it() -> None:
    source = "validator v {\n  deny if exists $.a # first\n    or exists $.b\n}"
    assert fmt(source) == validator("# first", "deny if exists $.a or exists $.b")


def test_blank_line_before_a_leading_comment_is_kept() -> None:
    source = "validator v {\n  mode audit\n\n  # about fail\n  fail open\n}"
    assert fmt(source) == validator("mode audit", "", "# about fail", "fail open")


def test_comments_at_block_end_and_file_end_stay_there() -> None:
    source = "validator v {\n  mode audit\n  # end of block\n}\n# end of file"
    assert fmt(source) == validator("mode audit", "# end of block") + "\n# end of file\n"


def test_comment_after_closing_brace_trails_it() -> None:
    source = "validator v { mode audit }  # done"
    assert fmt(source) == "validator v {\n  mode audit\n}  # done\n"


def test_header_comment_trails_the_header() -> None:
    source = 'test "t" { # header\n  expect allow\n}'
    assert fmt(source) == 'test "t" {  # header\n  expect allow\n}\n'


def test_comment_before_closing_brace_of_empty_block_keeps_it_open() -> None:
    assert fmt("validator v {\n# inside\n}") == "validator v {\n  # inside\n}\n"
    assert fmt("validator v {}") == "validator v {}\n"


# ----------------------------------------------------------- test payloads


def _given_line(width: int) -> str:
    """A ``given`` line, indented, exactly ``width`` columns long."""
    head = '  given tools/call request {"k": ""}'
    return head.replace('""', json.dumps("x" * (width - len(head))))


def test_payload_at_the_width_limit_stays_on_one_line() -> None:
    line = _given_line(MAX_WIDTH)
    assert len(line) == MAX_WIDTH
    source = 'test "t" {\n' + line + "\n}\n"
    assert fmt(source) == source


def test_payload_past_the_width_limit_is_pretty_printed() -> None:
    line = _given_line(MAX_WIDTH + 1)
    value = "x" * (MAX_WIDTH + 1 - len('  given tools/call request {"k": ""}'))
    expected = f'test "t" {{\n  given tools/call request {{\n    "k": "{value}"\n  }}\n}}\n'
    assert fmt('test "t" {\n' + line + "\n}\n") == expected


def test_payload_keeps_key_order_and_unicode() -> None:
    source = 'test "t" {\n  expect payload {"z": 1, "a": "é", "m": [true, null, -0.5]}\n}\n'
    assert fmt(source) == source


def test_trailing_comment_on_pretty_payload_goes_on_its_last_line() -> None:
    long_value = "y" * MAX_WIDTH
    source = f'test "t" {{\n  context {{"k": "{long_value}"}}  # why\n}}\n'
    assert fmt(source).endswith("\n  }  # why\n}\n")


# --------------------------------------------------------------- outcomes


def test_unparsable_source_gives_no_text_and_the_parse_diagnostics() -> None:
    outcome = format_source("validator v { deny if $.a = 1 }", "bad.policy")
    assert outcome.text is None
    assert [d.code for d in outcome.diagnostics] == ["E004"]
    assert outcome.diagnostics[0].span.file == "bad.policy"


def _only_statement(text: str) -> ast.Statement:
    outcome = parse_source(text)
    assert outcome.file is not None, outcome.diagnostics
    item = outcome.file.items[0]
    assert isinstance(item, ast.Interceptor)
    (statement,) = item.statements
    return statement

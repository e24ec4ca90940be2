"""Twenty mistakes a new user makes, each answered by `policyc check` in full (issue 33).

Each `mistakes/NN-name.policy` holds one mistake: a misspelt keyword, field
or pattern, a wrong type or type name, a regex RE2 refuses (atomic group,
lookaround, backreference), a path the payload cannot have, a text test
written as an operator, a regex in quotes, an unquoted string, a shadowed
rule, a missing brace, a wrong test expectation, a wrong phase, a duplicate
name, a near-miss event, `=` for `==`. Its `.json` says what `check` must
answer: the code at `line:col`, a message saying what is wrong, and a
`help:` line with the fix. A diagnostic is fully helpful when it has all
of them, with the caret under the column it names.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from policy_engine.cli.main import cli

MISTAKES = Path(__file__).parent / "mistakes"
CASES = sorted(MISTAKES.glob("*.policy"))
HEADER = re.compile(r"^(?P<where>.+?):(\d+):(\d+): (error|warning)\[(\w+)\]: (?P<message>.+)$")


def test_there_are_at_least_twelve_mistakes_each_with_its_expectation() -> None:
    assert len(CASES) >= 12
    for case in CASES:
        assert case.with_suffix(".json").is_file(), case.name


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_check_answers_the_mistake_in_full(case: Path) -> None:
    want = json.loads(case.with_suffix(".json").read_text(encoding="utf-8"))
    result = CliRunner().invoke(cli, ["check", str(case)])
    assert result.exit_code == (1 if want["code"].startswith("E") else 0), result.output
    lines = result.output.splitlines()
    severity = "error" if want["code"].startswith("E") else "warning"
    header = f"{case}:{want['line']}:{want['col']}: {severity}[{want['code']}]: "
    starts = [i for i, line in enumerate(lines) if line.startswith(header)]
    assert starts, f"no `{header}` in:\n{result.output}"
    block = lines[starts[0] : starts[0] + 6]
    match = HEADER.match(block[0])
    assert match and want["message"] in match["message"], block[0]

    # The quoted source line, then a caret under the column named.
    source = case.read_text(encoding="utf-8").splitlines()[want["line"] - 1]
    quoted = f"{want['line']} | {source}"
    (at,) = [i for i, line in enumerate(block) if line.lstrip().startswith(quoted.lstrip())]
    gutter = block[at].index(" | ") + len(" | ")
    caret = block[at + 1]
    assert caret.strip().startswith("|") and "^" in caret, caret
    assert caret.index("^") == gutter + want["col"] - 1, "\n".join(block)

    helps = [line.strip() for line in block if line.strip().startswith("= help: ")]
    assert helps, f"no help line:\n{chr(10).join(block)}"
    assert want["help"] in helps[0], helps[0]

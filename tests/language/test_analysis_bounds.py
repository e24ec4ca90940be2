"""A hostile policy set cannot make the rule analyses run for minutes (issue 33).

Two long globs compared in one rule took 18.5 s on 1.7 kB, and `analyze`
compared every pair of rules (minutes on 10,000). The subprocess timeouts
below are generous ceilings, not speed assertions: the original code runs
far past them, the bounded analyses finish in seconds.
"""

from __future__ import annotations

import itertools
import re
import string
import subprocess
import sys
from pathlib import Path

import pytest

from policy_engine.language.globs import glob_matches, globs_intersect
from policy_engine.language.limits import SourceLimits
from policy_engine.language.pipeline import check_sources

CEILING_SECONDS = 120


def _policyc(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from policy_engine.cli.main import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=CEILING_SECONDS,
        check=False,
    )


def _long_glob(step: int, runs: int) -> str:
    letters = string.ascii_lowercase
    return "*".join(letters[i * step % 26] + letters[i * step * 7 % 26] for i in range(runs))


def test_two_long_globs_in_one_rule_are_compared_in_linear_time(tmp_path: Path) -> None:
    first, second = _long_glob(1, 900), _long_glob(3, 900)
    policy = tmp_path / "globs.policy"
    policy.write_text(
        "validator v {\n  on tools/call request\n"
        f'  deny if $.name like "{first}" and $.name like "{second}" "x"\n}}\n'
    )
    result = _policyc("check", "--format", "json", str(policy))
    assert "W301" in result.stdout  # the two globs' first runs differ: a proof, still found


def test_analyze_on_ten_thousand_rules_does_not_compare_every_pair(tmp_path: Path) -> None:
    lines = ["validator v {", "  on tools/call request"]
    for i in range(4_999):
        lines.append(f'  deny tools ["tool_{i}_*", "x{i}"]')
        lines.append(f'  deny if $.name == "n{i}" and $.arguments.a > {i} "m{i}"')
    lines.append('  deny tools ["tool_7_drop"]')
    lines.append('  deny if $.name == "n9" and $.arguments.a > 9 "again"')
    policy = tmp_path / "big.policy"
    policy.write_text("\n".join([*lines, "}"]) + "\n")
    result = _policyc("analyze", "--format", "json", str(policy))
    shadowed = re.findall(r'"code": "W320"', result.stdout)
    assert len(shadowed) == 2, result.stdout[-2000:]


def test_a_spent_budget_is_reported_and_proves_nothing() -> None:
    source = (
        "validator v {\n  on tools/call request\n"
        '  deny tools ["drop_*"]\n'
        '  deny tools ["drop_a"]\n'
        '  deny tools ["drop_b"]\n'
        '  deny tools ["drop_c"]\n}\n'
    )
    result = check_sources({"p.policy": source}, limits=SourceLimits(max_analysis_steps=2))
    found = [(d.code, d.span.line) for d in result.diagnostics]
    assert ("W323", 6) in found
    assert ("W320", 4) in found and ("W320", 6) not in found


def _regex(glob: str) -> re.Pattern[str]:
    parts = (".*" if c == "*" else "." if c == "?" else re.escape(c) for c in glob)
    return re.compile("".join(parts), re.S)


def _brute_intersect(a: str, b: str) -> bool:
    first, second = _regex(a), _regex(b)
    for size in range(len(a) + len(b) + 2):
        for chars in itertools.product("abx", repeat=size):
            text = "".join(chars)
            if first.fullmatch(text) and second.fullmatch(text):
                return True
    return False


@pytest.mark.parametrize("seed", range(4))
def test_fast_glob_answers_agree_with_brute_force(seed: int) -> None:
    import random

    rng = random.Random(seed)
    for _ in range(300):
        a = "".join(rng.choice("ab*?") for _ in range(rng.randint(0, 4)))
        b = "".join(rng.choice("ab*?") for _ in range(rng.randint(0, 4)))
        assert globs_intersect(a, b) == _brute_intersect(a, b), (a, b)
        text = "".join(rng.choice("ab?") for _ in range(rng.randint(0, 5)))
        assert glob_matches(a, text) == bool(_regex(a).fullmatch(text)), (a, text)

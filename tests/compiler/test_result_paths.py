"""Results name policy files relative to the policy root; absolute paths only when asked.

A result reaches clients and decision logs; the server's directory layout is not
theirs to see (issue 9).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from policy_engine.compiler import Limits, compile_policies

POLICIES = Path(__file__).resolve().parents[2] / "policies"
SHELL = {"name": "shell_exec", "arguments": {}}
# The line of the rule that blocks SHELL, read from the file so an edit above it
# moves the expectation with it.
LINE = next(
    number
    for number, text in enumerate((POLICIES / "tool-guard.policy").read_text().splitlines(), 1)
    if "code blocked-tool" in text
)


def _sources(policy_set: object) -> list[str]:
    result = policy_set.invoke_sync("tool-guard", "tools/call", "request", SHELL)  # type: ignore[attr-defined]
    return [rule["source"] for rule in result.to_wire()["info"]["rules"]]


def _tool_guard(sources: list[str]) -> list[str]:
    """The sources that name tool-guard's file (other shipped validators may fire too)."""
    return [source for source in sources if "guard.policy" in source]


def test_a_folder_names_files_relative_to_it() -> None:
    assert _sources(compile_policies([POLICIES.resolve()])) == [f"tool-guard.policy:{LINE}"]


def test_a_nested_file_keeps_its_place_below_the_root(tmp_path: Path) -> None:
    (tmp_path / "team").mkdir()
    (tmp_path / "team" / "guard.policy").write_bytes((POLICIES / "tool-guard.policy").read_bytes())
    assert _sources(compile_policies([tmp_path])) == [f"team/guard.policy:{LINE}"]


def test_a_file_given_alone_is_named_by_its_name() -> None:
    assert _sources(compile_policies([POLICIES / "tool-guard.policy"])) == [
        f"tool-guard.policy:{LINE}"
    ]


def test_absolute_paths_when_asked() -> None:
    policy_set = compile_policies([POLICIES], Limits(absolute_paths=True))
    assert _sources(policy_set) == [f"{(POLICIES / 'tool-guard.policy').resolve()}:{LINE}"]


def test_eval_reports_relative_paths_unless_told_otherwise() -> None:
    def run(*extra: str) -> list[str]:
        command = [sys.executable, "-m", "policy_engine.cli.main", "eval", str(POLICIES.resolve())]
        flags = ["--event", "tools/call", "--phase", "request", "--payload", "-", *extra]
        done = subprocess.run(
            [*command, *flags],
            input=json.dumps(SHELL),
            capture_output=True,
            text=True,
            timeout=120,
        )
        results = json.loads(done.stdout)["results"]
        return [r["source"] for e in results for r in (e.get("info") or {}).get("rules", [])]

    assert _tool_guard(run()) == [f"tool-guard.policy:{LINE}"]
    assert _tool_guard(run("--absolute-paths")) == [
        f"{(POLICIES / 'tool-guard.policy').resolve()}:{LINE}"
    ]

"""`policyc check` as CI runs it: exit codes, streams, the import budget, and scale.

Exit codes: 0 clean, 1 errors (or warnings under ``--strict``), 2 usage errors.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
CLEAN = """\
validator tool-guard {
  on tools/call request
  deny tools ["shell_exec"]
}
"""
WARNING_ONLY = """\
validator tool-notes {
  on tools/call request
  warn if $.name == "shell_exec" "shell used"
}
"""
ERROR = """\
validator tool-guard {
  on tools/call request
  deny if $.params.name == "shell_exec"
}
"""
SUMMARY = re.compile(r"^(\d+) file\(s\) checked: (\d+) error\(s\), (\d+) warning\(s\)$", re.M)


def policyc(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "policy_engine.cli.main", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def summary(stderr: str) -> tuple[int, int, int]:
    match = SUMMARY.search(stderr)
    assert match is not None, stderr
    files, errors, warnings = match.groups()
    return int(files), int(errors), int(warnings)


def test_clean_file_exits_0(tmp_path: Path) -> None:
    write(tmp_path, "clean.policy", CLEAN)
    result = policyc("check", "clean.policy", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert summary(result.stderr) == (1, 0, 0)


def test_shipped_policies_are_clean() -> None:
    result = policyc("check", "policies")
    assert result.returncode == 0, result.stdout
    files, errors, warnings = summary(result.stderr)
    assert files == len(list((REPO / "policies").rglob("*.policy"))) and files > 0
    assert (errors, warnings) == (0, 0)


def test_errors_exit_1(tmp_path: Path) -> None:
    write(tmp_path, "bad.policy", ERROR)
    result = policyc("check", "bad.policy", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.startswith("bad.policy:3:11: error[E203]: no field `params`")
    assert summary(result.stderr) == (1, 1, 0)


def test_errors_in_one_file_do_not_hide_the_others(tmp_path: Path) -> None:
    write(tmp_path, "a.policy", ERROR)
    write(tmp_path, "b.policy", "validator {\n")
    write(tmp_path, "c.policy", CLEAN.replace("tool-guard", "other-guard"))
    result = policyc("check", "--format", "json", ".", cwd=tmp_path)
    assert result.returncode == 1
    found = [(d["file"], d["code"]) for d in json.loads(result.stdout)["diagnostics"]]
    assert found == [("a.policy", "E203"), ("b.policy", "E001")]


@pytest.mark.parametrize(("strict", "expected"), [(False, 0), (True, 1)])
def test_warnings_fail_only_under_strict(tmp_path: Path, strict: bool, expected: int) -> None:
    write(tmp_path, "notes.policy", WARNING_ONLY)
    args = ["check", *(["--strict"] if strict else []), "notes.policy"]
    result = policyc(*args, cwd=tmp_path)
    assert result.returncode == expected
    assert "warning[W304]" in result.stdout
    assert summary(result.stderr) == (1, 0, 1)


@pytest.mark.parametrize(
    "args",
    [
        ["check", "does-not-exist.policy"],
        ["check", "--format", "xml", "clean.policy"],
        ["check", "empty-dir"],
    ],
    ids=["missing-path", "bad-format", "no-policy-files"],
)
def test_usage_errors_exit_2(tmp_path: Path, args: list[str]) -> None:
    write(tmp_path, "clean.policy", CLEAN)
    (tmp_path / "empty-dir").mkdir()
    result = policyc(*args, cwd=tmp_path)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    assert result.stderr.strip()


def test_max_diagnostics_caps_the_report(tmp_path: Path) -> None:
    rules = "\n".join(f'  deny if $.nme{i} == "x"' for i in range(12))
    write(tmp_path, "many.policy", f"validator v {{\n  on tools/call request\n{rules}\n}}\n")
    capped = policyc("check", "--max-diagnostics", "5", "many.policy", cwd=tmp_path)
    assert capped.returncode == 1
    assert capped.stdout.count("error[E203]") == 5
    assert "... and 7 more (raise --max-diagnostics to see them)" in capped.stdout


def test_console_script_entry_point(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("policyc")
    assert script.exists()
    write(tmp_path, "bad.policy", ERROR)
    result = subprocess.run(
        [str(script), "check", "bad.policy"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert "error[E203]" in result.stdout


IMPORT_PROBE = """
import json, sys
from policy_engine.cli.main import main
try:
    main(["check", "policies"])
except SystemExit as exit:
    code = exit.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def test_check_imports_neither_the_mcp_sdk_nor_pydantic() -> None:
    """The SDK costs about a second to import, pydantic a fifth of one: the
    checker needs neither (descriptors are built only when something serves them)."""
    result = subprocess.run(
        [sys.executable, "-c", IMPORT_PROBE],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["code"] == 0
    modules = report["modules"]
    # The probe really ran the checker, so the absence below means something.
    assert "policy_engine.language.pipeline" in modules
    assert "policy_engine.cli.check" in modules
    heavy = [m for m in modules if m.split(".")[0] in {"mcp", "mcp_types", "pydantic"}]
    assert heavy == []


# -------------------------------------------------------------------- scale


def generated_policy(i: int) -> str:
    """One of several shapes; names and written paths are unique across the set."""
    shape = i % 4
    if shape == 0:
        return f"""\
pattern TICKET_{i} = /T{i}-[0-9]+/

mutator redact-{i} "Generated redactor {i}" version "1.0.{i}" {{
  on tools/call request priority {i}
  redact $.arguments.note_{i} matching TICKET_{i}, EMAIL with "[{{pattern}}]"
  mask $.arguments.card_{i} keep 4
}}
"""
    if shape == 1:
        return f"""\
validator guard-{i} {{
  on tools/call request
  param blocked: list[string] = ["shell_{i}", "rm_*"]
  deny tools param.blocked "tool {i} is blocked" code blocked-{i}
  deny if any $.arguments.* matches /(?i)drop\\s+table_{i}/ code sql-{i}
  warn if length($.name) > {10 + i} "long name"
  limit size {i + 1} kb
}}

test "guard {i} blocks" {{
  given tools/call request {{"name": "shell_{i}", "arguments": {{}}}}
  only guard-{i}
  expect deny
  expect code blocked-{i}
}}
"""
    if shape == 2:
        return f"""\
validator sampling-{i} {{
  on sampling/createMessage request
  param maxTokens: int = {1000 + i}
  deny if $.maxTokens > param.maxTokens "over budget" code budget-{i}
  allow models ["claude-*", "model-{i}"]
  info if missing $.systemPrompt "no system prompt"
}}
"""
    return f"""\
# Generated file {i}.
mutator cleanup-{i} {{
  on tools/call both
  priority request {i} response {-i}
  remove $._meta.trace_{i} if exists $._meta
  set $.arguments.flag_{i} = true unless $.name in ["a", "b"]
  truncate $.content[*].text to {100 + i} with "..."
}}
"""


def test_checking_100_generated_files(tmp_path: Path) -> None:
    for i in range(100):
        write(tmp_path, f"generated_{i:03}.policy", generated_policy(i))
    started = time.perf_counter()
    result = policyc("check", ".", cwd=tmp_path)
    elapsed = time.perf_counter() - started
    assert result.returncode == 0, result.stdout[:2000]
    assert summary(result.stderr) == (100, 0, 0)
    print(f"policyc check on 100 generated files: {elapsed:.2f} s")


def test_the_readme_ci_recipe_passes_on_the_shipped_policies() -> None:
    """The README's CI commands, run as written: strict check, format check, full coverage."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("### In CI") :]
    start = section.index("```sh\n") + len("```sh\n")
    block = section[start : section.index("\n```", start)]
    commands = [line.split() for line in block.splitlines() if line.startswith("policyc ")]
    assert ["policyc", "check", "--strict", "policies/"] in commands
    for command in commands:
        done = policyc(*command[1:])
        assert done.returncode == 0, (command, done.stdout, done.stderr)


def test_tools_snapshot_checks_names_and_arguments(tmp_path: Path) -> None:
    snapshot = {
        "tools": [
            {
                "name": "search",
                "inputSchema": {"type": "object", "properties": {"limit": {"type": "integer"}}},
            }
        ]
    }
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(snapshot), encoding="utf-8")
    policy = write(
        tmp_path,
        "p.policy",
        'validator v {\n  on tools/call request\n  deny if $.name == "serch"\n'
        "  deny if $.arguments.limt > 1\n}\n",
    )
    done = policyc("check", "--strict", "--tools", str(tools), str(policy))
    assert done.returncode == 1
    assert "warning[W102]" in done.stdout and "did you mean `search`?" in done.stdout
    assert "warning[W103]" in done.stdout and "did you mean `limit`?" in done.stdout
    assert summary(done.stderr) == (1, 0, 2)
    assert policyc("check", "--tools", str(tools), str(policy)).returncode == 0


def test_a_tools_snapshot_that_is_not_a_tools_list_is_a_usage_error(tmp_path: Path) -> None:
    tools = write(tmp_path, "tools.json", '{"resources": []}')
    policy = write(tmp_path, "p.policy", CLEAN)
    done = policyc("check", "--tools", str(tools), str(policy))
    assert done.returncode == 2
    assert "expected a tools/list result" in done.stderr
    assert "Traceback" not in done.stderr


def test_server_fetches_a_live_tools_list_over_stdio(tmp_path: Path) -> None:
    """A real MCP server process (the SDK's own MCPServer) answers tools/list."""
    server = f"{sys.executable} {REPO / 'tests' / 'cli' / 'servers' / 'tools_server.py'}"
    policy = write(
        tmp_path,
        "p.policy",
        'validator v {\n  on tools/call request\n  deny if $.name == "search"'
        ' and $.arguments.limt > 1\n  deny tools ["read_file"]\n}\n',
    )
    done = policyc("check", "--server", server, str(policy))
    assert done.returncode == 0, done.stderr
    assert "no input schema of `search` has the argument `limt`" in done.stdout
    assert "did you mean `limit`?" in done.stdout
    assert "W102" not in done.stdout
    unreachable = policyc("check", "--server", str(tmp_path / "missing"), str(policy))
    assert unreachable.returncode == 2
    assert "could not list its tools" in unreachable.stderr
    assert "Traceback" not in unreachable.stderr


def test_a_server_sending_deep_json_is_a_clean_usage_error(tmp_path: Path) -> None:
    """A tools/list nested past the SDK's parser limit: one line, no traceback, no 30 s wait."""
    server = f"{sys.executable} {REPO / 'tests' / 'cli' / 'servers' / 'deep_json_server.py'}"
    policy = write(tmp_path, "p.policy", CLEAN)
    done = policyc("check", "--server", server, str(policy))
    assert done.returncode == 2
    assert "the server sent a message the MCP client could not read" in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr

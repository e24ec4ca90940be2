"""`policyc conformance` end to end: real CLI processes starting real servers per fixture.

Against policyc's own adapter (stdio and streamable HTTP), against two
independent implementations (an adapter written with the official TypeScript
MCP SDK, and the server tests' in-code Python providers started through the
`{interceptors}` placeholder), and against a server that ignores its
fixture, which must fail.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from policy_engine.conformance.contract import UNSUPPORTED_MARKER

pytestmark = pytest.mark.e2e

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
EXPECTED = json.loads((HERE / "expected_results.json").read_text(encoding="utf-8"))["fixtures"]
GUARD_FIXTURES = [
    fixture_id
    for fixture_id in EXPECTED
    if fixture_id.startswith(("behavior/relaybleed", "behavior/same-origin", "behavior/no-prior"))
    or fixture_id in ("behavior/session-isolation", "behavior/redaction-defuses-relaybleed")
]
SECOND_SERVER = f"{sys.executable} {REPO / 'tests' / 'server' / 'serve_fixture.py'}"


def policyc(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "policy_engine.cli.main", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def report_of(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.stderr == "", done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def test_policyc_adapter_passes_exactly_the_expected_fixtures() -> None:
    done = policyc("conformance", "--format", "json")
    report = report_of(done)
    statuses = {f["id"]: f["status"] for f in report["fixtures"]}
    assert statuses == {fixture_id: want["status"] for fixture_id, want in EXPECTED.items()}
    for fixture in report["fixtures"]:
        because = EXPECTED[fixture["id"]].get("because")
        if because is not None:
            details = [fixture.get("reason", "")] + [s.get("detail", "") for s in fixture["steps"]]
            assert any(because in detail for detail in details), fixture
    passed = sum(1 for want in EXPECTED.values() if want["status"] == "pass")
    assert report["summary"] == {
        "passed": passed,
        "total": 24,
        "percent": round(passed * 100 / 24, 1),
    }
    assert report["requirements"]["SEP-2624/chain.audit-nonblocking"] == {
        "passed": 2,
        "total": 2,
        "percent": 100.0,
    }
    assert done.returncode == (0 if passed == 24 else 1), "below 100% the command fails"


def test_each_step_kind_passes_over_streamable_http() -> None:
    some = (
        "protocol/list-",
        "protocol/invoke-unknown",
        "protocol/chain-fail",
        "behavior/redaction-aws",
    )
    picks = [arg for prefix in some for arg in ("--fixture", prefix)]
    done = policyc("conformance", "--http", *picks, "--format", "json")
    report = report_of(done)
    assert [f["status"] for f in report["fixtures"]] == ["pass"] * 6
    assert report["server"] == "policyc conformance-adapter (streamable HTTP)"
    assert done.returncode == 0


def test_an_adapter_written_with_the_typescript_sdk() -> None:
    node = shutil.which("node")
    assert node is not None, "Node.js is required, as for the TypeScript interop tests"
    done = policyc(
        "conformance", "--server", f"{node} {HERE / 'ts_adapter.mjs'}", "--format", "json"
    )
    report = report_of(done)
    # The TypeScript adapter binds no cross-boundary guard: it says so, as the contract asks.
    guard = set(GUARD_FIXTURES)
    assert {f["id"]: f["status"] for f in report["fixtures"]} == {
        fixture_id: "unsupported" if fixture_id in guard else "pass" for fixture_id in EXPECTED
    }
    for fixture in report["fixtures"]:
        if fixture["id"] in guard:
            assert fixture["reason"] == "no binding for behaviour `cross-boundary-guard`"
    assert report["summary"]["passed"] == 17
    assert done.returncode == 1


def test_a_python_implementation_through_the_interceptors_placeholder() -> None:
    server = f"{SECOND_SERVER} --specs {{interceptors}}"
    picks = ("--fixture", "protocol/list-", "--fixture", "protocol/invoke-")
    done = policyc("conformance", "--server", server, *picks, "--format", "json")
    report = report_of(done)
    assert {f["id"]: f["status"] for f in report["fixtures"]} == {
        fixture_id: "pass"
        for fixture_id in EXPECTED
        if fixture_id.startswith(("protocol/list-", "protocol/invoke-"))
    }
    assert done.returncode == 0


def test_a_server_that_ignores_its_fixture_fails_with_what_differed() -> None:
    # Without --specs the second server registers its own default interceptors.
    done = policyc(
        "conformance",
        "--server",
        SECOND_SERVER,
        "--fixture",
        "protocol/list-all",
        "--fixture",
        "protocol/invoke-validation-deny",
    )
    assert done.returncode == 1
    text = done.stdout
    assert "FAIL        protocol/list-all" in text
    assert 'step 0 (list): got {"interceptors":[{"hooks"' in text
    assert "step 0 (invoke): interceptor/invoke failed: JSON-RPC error -32602" in text
    assert text.endswith("0/2 fixtures passed (0.0%)\n")


def test_threshold_sets_the_exit_status() -> None:
    # The second server binds no guard, so one of the two fixtures is unsupported.
    server = ("--server", f"{SECOND_SERVER} --specs {{interceptors}}")
    half = ("--fixture", "protocol/list-all", "--fixture", "behavior/session-isolation")
    met = policyc("conformance", *server, *half, "--threshold", "50")
    assert met.returncode == 0, met.stdout + met.stderr
    assert met.stdout.endswith("1/2 fixtures passed (50.0%)\n")
    assert "behavior/session-isolation" in met.stdout
    missed = policyc("conformance", *server, *half, "--threshold", "50.1")
    assert missed.returncode == 1


def test_a_server_that_does_not_start_is_an_error_quoting_its_stderr() -> None:
    server = f"{sys.executable} -c \"import sys; sys.exit('no such adapter')\""
    done = policyc("conformance", "--server", server, "--fixture", "protocol/list-all")
    assert done.returncode == 1
    assert "ERROR       protocol/list-all" in done.stdout
    assert "its stderr ends: no such adapter" in done.stdout


def test_usage_errors() -> None:
    unknown = policyc("conformance", "--fixture", "protocol/nope")
    assert unknown.returncode == 2
    assert unknown.stderr == "policyc: no fixture id starts with `protocol/nope`\n"
    url_alone = policyc("conformance", "--url", "http://127.0.0.1:1/mcp")
    assert url_alone.returncode == 2
    assert "--url needs --server" in url_alone.stderr


def test_adapter_refuses_a_behaviour_it_cannot_bind(tmp_path: Path) -> None:
    entries = [
        {
            "name": "security/teleport",
            "type": "validation",
            "behavior": "teleport",
            "events": ["tools/call"],
            "phases": "both",
        }
    ]
    (tmp_path / "interceptors.json").write_text(json.dumps(entries))
    done = policyc("conformance-adapter", "--interceptors", str(tmp_path / "interceptors.json"))
    assert done.returncode == 3
    assert done.stderr.startswith(UNSUPPORTED_MARKER + " no binding for behaviour `teleport`")
    assert done.stdout == ""


def test_adapter_without_an_interceptors_file_is_a_usage_error() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "policy_engine.cli.main", "conformance-adapter"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={k: v for k, v in os.environ.items() if not k.startswith("MCP_CONFORMANCE")},
    )
    assert done.returncode == 2
    assert "pass --interceptors or set $MCP_CONFORMANCE_INTERCEPTORS" in done.stderr


def test_the_results_table_in_the_docs_is_the_expected_one() -> None:
    page = (REPO / "docs" / "conformance.md").read_text(encoding="utf-8")
    rows = [line.split("|") for line in page.splitlines() if line.startswith("| `protocol/")]
    rows += [line.split("|") for line in page.splitlines() if line.startswith("| `behavior/")]
    documented = {cells[1].strip().strip("`"): cells[3].strip() for cells in rows}
    assert documented == {fixture_id: want["status"] for fixture_id, want in EXPECTED.items()}
    passed = sum(1 for want in EXPECTED.values() if want["status"] == "pass")
    assert f"**{passed} of 24 fixtures pass ({round(passed * 100 / 24, 1)}%)**" in page

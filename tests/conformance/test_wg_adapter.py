"""`policyc conformance --wg-adapter`: adapters that follow the working group's ADAPTER.md.

The group's contract is four calls in the SDK's language, not a server. One
adapter in its Python runner's shape (interceptors on policyc's server over
an in-memory MCP connection, envelope and all) must pass every fixture; one
in its TypeScript shape, run by Node, passes the protocol fixtures and is
unsupported, with its reason, on the security ones it cannot bind; one that
writes defaults out on `interceptors/list` fails, saying what differed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.e2e

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
EXPECTED = json.loads((HERE / "expected_results.json").read_text(encoding="utf-8"))["fixtures"]


def policyc(*args: str) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "policy_engine.cli.main", "conformance", *args],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def statuses(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.stderr == "", done.stderr
    return {f["id"]: f for f in json.loads(done.stdout)["fixtures"]}


def test_a_python_adapter_in_the_groups_shape_passes_every_fixture() -> None:
    done = policyc("--wg-adapter", "python:wg_python_adapter:ADAPTER", "--format", "json")
    assert done.returncode == 0, done.stdout[-2000:]
    fixtures = statuses(done)
    assert set(fixtures) == set(EXPECTED)
    assert {f["status"] for f in fixtures.values()} == {"pass"}


def test_a_node_adapter_in_the_groups_shape_and_its_unsupported_behaviours() -> None:
    adapter = f"node:{HERE / 'wg_node_adapter.mjs'}"
    done = policyc("--wg-adapter", adapter, "--format", "json")
    assert done.returncode == 1
    fixtures = statuses(done)
    assert set(fixtures) == set(EXPECTED)
    for fixture_id, fixture in fixtures.items():
        if fixture_id.startswith("protocol/"):
            assert fixture["status"] == "pass", fixture
        else:
            assert fixture["status"] == "unsupported", fixture
            assert fixture["reason"].startswith("no binding for behaviour `"), fixture


def test_defaults_written_out_fail_the_list_fixtures_saying_what_differed() -> None:
    done = policyc(
        "--wg-adapter", "python:wg_python_adapter:RAW_ADAPTER", "--fixture", "protocol/list"
    )
    assert done.returncode == 1
    assert "0/2 fixtures passed" in done.stdout
    assert '"failOpen":false' in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--wg-adapter", "ruby:x"], "python:MODULE:ATTR or node:PATH"),
        (["--wg-adapter", "python:nope"], "write python:MODULE:ATTR"),
        (["--wg-adapter", "python:no_such_module_here:X"], "cannot import `no_such_module_here`"),
        (["--wg-adapter", "python:wg_python_adapter:NOPE"], "has no `NOPE`"),
        (["--wg-adapter", "python:wg_python_adapter:ADAPTER", "--server", "x"], "not a server"),
    ],
)
def test_usage_errors(args: list[str], message: str) -> None:
    done = policyc(*args)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_a_node_adapter_that_cannot_load_is_an_error_quoting_node(tmp_path: Path) -> None:
    missing = tmp_path / "missing.mjs"
    done = policyc(
        "--wg-adapter", f"node:{missing}", "--fixture", "protocol/list-all", "--format", "json"
    )
    assert done.returncode == 1
    fixture = statuses(done)["protocol/list-all"]
    assert fixture["status"] == "error"
    assert "Cannot find module" in fixture["reason"] or "ERR_MODULE_NOT_FOUND" in fixture["reason"]

"""An installed wheel finds its grammar from any directory (non-editable install)."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[1]


def test_wheel_ships_the_grammar_and_runs_from_elsewhere(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(REPO),
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(dist),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = dist.glob("policyc-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "policy_engine/grammar/policy.lark" in names
    assert "policy_engine/language/data/mcp_payloads.json" in names
    assert "policy_engine/language/data/parser_tables.bin" in names
    assert "policy_engine/policies/secrets.policy" in names
    assert "policy_engine/conformance/suite/manifest.json" in names
    assert "policy_engine/conformance/behaviors/deny-all.policy" in names
    # PEP 561: type checkers read the package's annotations.
    assert "policy_engine/py.typed" in names
    # Measurement code is not runtime code (bench/pack_score.py).
    assert not [name for name in names if "pack_score" in name]
    for asset in ("index.html", "app.js", "style.css", "examples.json", "example.policy"):
        assert f"policy_engine/authoring/playground/static/{asset}" in names

    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    probe = (
        "import policy_engine, sys\n"
        "from policy_engine.language.grammar import grammar_path\n"
        "print(policy_engine.__file__)\n"
        "print(grammar_path())\n"
        "from policy_engine.conformance.adapter import shipped_policies_dir\n"
        "print(shipped_policies_dir())\n"
        "from policy_engine.cli.main import main\n"
        f"main(['check', {str(REPO / 'policies')!r}])\n"
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=elsewhere, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    module_file, grammar, policies = done.stdout.splitlines()[:3]
    assert module_file.startswith(str(site))
    assert grammar == str(site / "policy_engine" / "grammar" / "policy.lark")
    assert policies == str(site / "policy_engine" / "policies")
    assert "0 error(s)" in done.stderr

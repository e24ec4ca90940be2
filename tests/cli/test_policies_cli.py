"""`policyc policies`: the shipped packs can be found and each one compiles."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from policy_engine.cli.main import cli
from policy_engine.compiler import compile_policies

REPO = Path(__file__).resolve().parents[2]


def test_path_prints_a_folder_of_policy_packs_that_compile() -> None:
    done = CliRunner().invoke(cli, ["policies", "path"])
    assert done.exit_code == 0, done.output
    folder = Path(done.output.strip())
    assert folder.resolve() == (REPO / "policies").resolve()
    packs = sorted(p for p in folder.glob("*.policy") if not p.stem.endswith("_test"))
    assert packs
    compiled = compile_policies(packs)
    assert {"tool-guard", "pii-redactor", "secret-redactor"} <= set(compiled.interceptors)


def test_list_names_each_pack_with_its_interceptors_and_leaves_tests_out() -> None:
    done = CliRunner().invoke(cli, ["policies", "list"])
    assert done.exit_code == 0, done.output
    lines = done.output.splitlines()
    assert "tool-guard.policy: tool-guard, admin-only-tools" in lines
    assert "pii.policy: pii-redactor" in lines
    assert not any("_test.policy" in line for line in lines)
    assert not any("does not compile" in line for line in lines)

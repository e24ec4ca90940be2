"""docs/identity.md's examples: the config tables load, the policy's tests pass, every
flag its commands use exists, and the example policy it links is the one the tests run."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from gateway_harness import ROOT

from policy_engine.cli.gateway import gateway
from policy_engine.cli.serve import serve
from policy_engine.gateway import load_config

pytestmark = pytest.mark.e2e

PAGE = (ROOT / "docs" / "identity.md").read_text(encoding="utf-8")


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", PAGE, flags=re.S)


@pytest.mark.parametrize("index", range(len(blocks("toml"))))
def test_each_toml_example_loads(tmp_path: Path, index: int) -> None:
    config = tmp_path / "gateway.toml"
    config.write_text(blocks("toml")[index])
    options = load_config(config)
    assert options.oauth is not None or options.principal is not None


def test_the_principal_table_sets_the_stdio_principal(tmp_path: Path) -> None:
    config = tmp_path / "gateway.toml"
    config.write_text(next(b for b in blocks("toml") if "[principal]" in b))
    principal = load_config(config).principal
    assert principal is not None and principal.id == "alice"
    assert principal.claims == {"roles": ["ops"], "team": "platform"}


def test_the_policy_example_passes_its_tests(tmp_path: Path) -> None:
    (policy,) = blocks("policy")
    path = tmp_path / "example.policy"
    path.write_text(policy)
    done = subprocess.run(
        [sys.executable, "-m", "policy_engine.cli.main", "test", str(path)],
        cwd=str(ROOT),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed, 0 failed" in done.stdout + done.stderr


def test_every_flag_in_the_commands_exists() -> None:
    known = {
        "gateway": {opt for param in gateway.params for opt in getattr(param, "opts", [])},
        "serve": {opt for param in serve.params for opt in getattr(param, "opts", [])},
    }
    commands = [c for block in blocks("sh") for c in block.split("policyc ")[1:]]
    assert len(commands) == 4
    for command in commands:
        name = command.split()[0]
        for flag in re.findall(r"(--[a-z-]+)", command):
            assert flag in known[name], (name, flag)
    table_flags = set(re.findall(r"`(--auth-[a-z-]+)", PAGE))
    assert table_flags and table_flags <= known["gateway"] & known["serve"]

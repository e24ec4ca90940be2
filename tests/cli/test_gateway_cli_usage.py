"""`policyc gateway` refuses a bad command line before it starts anything: each
misuse gets its own message and exit code, and when several are wrong the first
check in the command's order speaks (a config error before a front error, a
front error before a flow error, the flow key before the bearer token)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from policy_engine.cli.main import cli

HTTP = ("--backend", "a=true", "--http", "127.0.0.1:0")


def _run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["gateway", *args], env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("--check",), 2, "--check needs --config FILE"),
        ((), 2, "give at least one --backend"),
        (("--backend", "bad"), 2, "--backend wants NAME=COMMAND or NAME=URL"),
        (("--backend", "a=true", "--backend", "a=true"), 2, "two backends share a name"),
        (("--backend", "a=true", "--pass-env", "GW_UNSET_P"), 2, "--pass-env GW_UNSET_P"),
        (("--backend", "a=true", "--stateless"), 2, "need --http"),
        (("--backend", "a=true", "--auth-token-env", "X"), 2, "need --http"),
        (("--backend", "a=true", "--http", "nonsense"), 2, "--http wants HOST:PORT"),
        ((*HTTP, "--principal-id", "x"), 2, "--principal-id and --principal-role are for stdio"),
        ((*HTTP, "--stateless"), 2, "--stateless needs --flow-key-env"),
        ((*HTTP, "--stateless", "--auth-token-env", "GW_UNSET_T"), 2, "needs --flow-key-env"),
        ((*HTTP, "--auth-token-env", "GW_UNSET_T"), 2, "`GW_UNSET_T` holds no bearer token"),
        (("--backend", "a=true", "--flow-key-env", "GW_SHORT"), 2, "must hold at least 16"),
        (("--backend", "a=true", "--flow-store", "redis://x"), 2, "needs --flow-key-env"),
        (("--backend", "a=true", "--watch"), 2, "--watch needs policy files to watch"),
    ],
)
def test_a_misused_command_line_is_refused_with_its_reason(
    args: tuple[str, ...], code: int, message: str
) -> None:
    exit_code, output = _run(*args, env={"GW_SHORT": "short"})
    assert exit_code == code
    assert message in output
    assert "Traceback" not in output


def test_config_check_and_config_errors(tmp_path: Path) -> None:
    good = tmp_path / "good.toml"
    good.write_text('[[backends]]\nname = "a"\ncommand = ["true"]\n')
    bad = tmp_path / "bad.toml"
    bad.write_text("nonsense = 1\n")
    assert _run("--config", str(good), "--check") == (0, f"{good}: ok\n")
    for args in (("--config", str(bad), "--check"), ("--config", str(bad), "--stateless")):
        code, output = _run(*args)
        assert code == 1
        assert "unknown key `nonsense`" in output
        assert "need --http" not in output  # the file is judged before the flags


def test_an_unopenable_decision_log_is_refused(tmp_path: Path) -> None:
    missing = tmp_path / "missing" / "decisions.log"
    for flag in ("--decision-log", "--record"):
        code, output = _run("--backend", "a=true", flag, str(missing))
        assert code == 2
        assert "its folder does not exist" in output


def test_a_reload_under_stateless_is_held_to_the_start_up_rules() -> None:
    """An edit that adds a rate limit or a flow rule to a `--stateless` gateway without a
    shared store would let each replica count alone: the reload is refused like start-up."""
    from policy_engine.cli.gateway import _unshared_state
    from policy_engine.compiler import compile_sources
    from policy_engine.gateway.serve import GatewayOptions

    limited = compile_sources(
        {"q.policy": "validator q {\n  on tools/call request\n  limit rate 5 per minute\n}\n"}
    )
    plain = compile_sources(
        {"p.policy": 'validator p {\n  on tools/call request\n  deny tools ["x"]\n}\n'}
    )
    stateless = GatewayOptions(stateless=True)
    reason = _unshared_state(stateless, None, limited)
    assert reason is not None and "rate limits needs --flow-store" in reason
    assert _unshared_state(stateless, "redis://127.0.0.1:6379/0", limited) is None
    assert _unshared_state(stateless, None, plain) is None
    assert _unshared_state(GatewayOptions(), None, limited) is None

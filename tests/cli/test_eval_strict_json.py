"""`policyc eval` reads its JSON inputs as strictly as the wire: no NaN, no Infinity.

``NaN`` passes a ``>`` rule (every comparison with it is false), so a sampling
budget would let ``"maxTokens": NaN`` through if it were read as a number.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from policy_engine.cli.main import cli

NON_FINITE = ["NaN", "Infinity", "-Infinity", "1e400"]


@pytest.mark.parametrize("number", NON_FINITE)
def test_a_non_finite_payload_is_a_usage_error(
    runner: CliRunner, policies: Path, number: str
) -> None:
    payload = '{"messages": [], "maxTokens": NUMBER}'.replace("NUMBER", number)
    result = runner.invoke(
        cli,
        [
            "eval",
            str(policies),
            "--event",
            "sampling/createMessage",
            "--phase",
            "request",
            "--payload",
            "-",
        ],
        input=payload,
    )
    assert result.exit_code == 2
    assert "payload is not valid JSON" in result.output
    assert "maxTokens" not in result.output


@pytest.mark.parametrize("number", NON_FINITE)
def test_a_non_finite_context_or_config_is_a_usage_error(
    runner: CliRunner, policies: Path, number: str
) -> None:
    for option, text in (
        ("--context", '{"principal": {"type": "user", "claims": {"n": NUMBER}}}'),
        ("--config", '{"tool-guard": {"n": NUMBER}}'),
    ):
        text = text.replace("NUMBER", number)
        result = runner.invoke(
            cli,
            ["eval", str(policies), "--event", "tools/call", "--phase", "request", option, text],
        )
        assert result.exit_code == 2, result.output
        assert f"{option} is not valid JSON" in result.output

"""What an operator sets up: the environment a stdio backend gets, per-interceptor
params from the config file."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import anyio
import pytest
from gateway_harness import RECORDER, ROOT, gateway_argv, policyc_gateway, text_of
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from policy_engine.gateway import ConfigError, load_config

# The tests that start a gateway or a backend process carry the e2e mark.

LIMIT = 60
TOKEN = "GITHUB_PERSONAL_ACCESS_TOKEN"


def env_reporting_backend(out: Path, log: Path) -> str:
    """The recording backend, behind a shell that writes the token it was given."""
    run = f'echo "token=${TOKEN}" > {shlex.quote(str(out))}; exec {sys.executable} {RECORDER} {log}'
    return f"rec=sh -c {shlex.quote(run)}"


async def token_seen(tmp_path: Path, *args: str) -> str:
    """Start the gateway with ``TOKEN`` in its own environment; what its backend got."""
    out = tmp_path / "env.out"
    argv = gateway_argv("--backend", env_reporting_backend(out, tmp_path / "c.log"), *args)
    params = StdioServerParameters(
        command=sys.executable,
        args=argv,
        cwd=str(ROOT),
        env={**os.environ, TOKEN: "ghp_from_the_host"},
    )
    with anyio.fail_after(LIMIT):
        async with Client(stdio_client(params), mode="legacy") as client:
            assert text_of(await client.call_tool("echo", {"text": "up"})) == "up"
    return out.read_text().strip()


@pytest.mark.e2e
async def test_a_backend_gets_no_host_secret_by_default(tmp_path: Path) -> None:
    assert await token_seen(tmp_path) == "token="


@pytest.mark.e2e
async def test_pass_env_hands_the_hosts_variable_to_stdio_backends(tmp_path: Path) -> None:
    assert await token_seen(tmp_path, "--pass-env", TOKEN) == "token=ghp_from_the_host"


@pytest.mark.e2e
async def test_backend_env_sets_a_variable(tmp_path: Path) -> None:
    assert await token_seen(tmp_path, "--backend-env", f"{TOKEN}=set") == "token=set"


def test_pass_env_of_an_unset_variable_is_refused(tmp_path: Path) -> None:
    done = policyc_gateway("--backend", "x=true", "--pass-env", "POLICYC_SURELY_UNSET")
    assert done.exit_code != 0
    assert "--pass-env POLICYC_SURELY_UNSET: the environment variable is not set" in done.stderr


def test_the_config_file_passes_env_and_interceptor_params(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TOKEN, "ghp_x")
    config = tmp_path / "gateway.toml"
    config.write_text(
        '[[backends]]\nname = "gh"\ncommand = "server-github"\n'
        f'pass_env = ["{TOKEN}"]\nenv = {{ LOG = "1" }}\n\n'
        '[overrides.tool-guard]\nfail_open = false\nconfig = { level = "high" }\n'
    )
    options = load_config(config)
    assert options.backends[0].env == {"LOG": "1", TOKEN: "ghp_x"}
    assert options.configs == {"tool-guard": {"level": "high"}}
    assert options.overrides["tool-guard"].fail_open is False
    monkeypatch.delenv(TOKEN)
    with pytest.raises(ConfigError, match=rf":4: error: environment variable `{TOKEN}` is not"):
        load_config(config)


def test_interceptor_params_reach_the_chain(tmp_path: Path) -> None:
    """The chain checks each config's interceptor name: one it does not run is an error
    at start-up, which shows the params are handed to it."""
    config = tmp_path / "gateway.toml"
    config.write_text(
        '[[backends]]\nname = "x"\ncommand = "true"\n\n'
        '[overrides.no-such-interceptor]\nconfig = { level = "high" }\n'
    )
    done = policyc_gateway("--config", str(config))
    assert done.exit_code != 0
    assert "settings for unknown interceptor `no-such-interceptor`" in done.stderr

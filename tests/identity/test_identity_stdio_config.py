"""The stdio principal (flags or ``[principal]``) and the ``[auth]`` config table."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from gateway_harness import ROOT, calls, gateway_client, recorder
from mcp.shared.exceptions import MCPError

from policy_engine.gateway import ConfigError, load_config

pytestmark = pytest.mark.e2e

ROLES = ROOT / "examples" / "identity" / "role-tools.policy"
LIMIT = 60


async def test_stdio_principal_from_flags(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    with anyio.fail_after(LIMIT):
        async with gateway_client(
            "--backend",
            recorder(log),
            "--principal-id",
            "alice",
            "--principal-role",
            "ops",
            policies=[ROLES],
        ) as client:
            await client.call_tool("lookup_user", {"user": "jane"})
        async with gateway_client("--backend", recorder(log), policies=[ROLES]) as client:
            with pytest.raises(MCPError):
                await client.call_tool("lookup_user", {"user": "jane"})
    assert [c["tool"] for c in calls(log)] == ["lookup_user"]


async def test_stdio_principal_from_the_config_file(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    config = tmp_path / "gateway.toml"
    config.write_text(
        f"""
policies = ["{ROLES}"]

[principal]
id = "carol"
claims = {{ roles = ["ops"] }}
"""
    )
    with anyio.fail_after(LIMIT):
        async with gateway_client(
            "--config", str(config), "--backend", recorder(log), policies=[]
        ) as client:
            await client.call_tool("lookup_user", {"user": "jane"})
    assert [c["tool"] for c in calls(log)] == ["lookup_user"]


def test_auth_table(tmp_path: Path) -> None:
    config = tmp_path / "gateway.toml"
    config.write_text(
        """
[auth]
issuer = "https://idp.example/realms/acme"
resource = "https://gateway.example/mcp"
required_scopes = ["mcp:tools"]
roles_claim = "realm_access.roles"
"""
    )
    options = load_config(config)
    assert options.oauth is not None
    assert options.oauth.issuer == "https://idp.example/realms/acme"
    assert options.oauth.required_scopes == ("mcp:tools",)
    assert options.oauth.mapping.roles_claim == "realm_access.roles"
    assert options.oauth.jwks_url is None


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('issuer = "https://idp.example"', "needs both `issuer` and `resource`"),
        ('issuer = "https://idp"\nresource = "gateway/mcp"', r"not an absolute http\(s\) URL"),
        ('issuer = "https://idp"\nresource = "https://g/mcp"\naudience = "x"', "unknown key"),
        ('issuer = "https://idp"\nresource = "https://g/mcp"\nrequired_scopes = "a"', "wrong type"),
    ],
)
def test_a_half_configured_auth_table_is_refused(tmp_path: Path, table: str, message: str) -> None:
    config = tmp_path / "gateway.toml"
    config.write_text(f"[auth]\n{table}\n")
    with pytest.raises(ConfigError, match=message):
        load_config(config)

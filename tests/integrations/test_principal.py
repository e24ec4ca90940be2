"""Principal rules work in-process: per connection and per call, on both hosts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError

from policy_engine.compiler import compile_policies
from policy_engine.integrations import PolicyBlocked, PolicyClient, install_policies
from policy_engine.wire import Principal

POLICIES = compile_policies([Path(__file__).resolve().parent / "policies" / "integ_test.policy"])
ADMIN = Principal(type="user", id="ada", claims={"roles": ["admin"]})
GUEST = Principal(type="user", id="bob", claims={"roles": []})


def server(**options: Any) -> MCPServer:
    app = MCPServer("deployer")

    @app.tool()
    def deploy(target: str) -> str:
        """Deploy (admins only)."""
        return f"deployed {target}"

    install_policies(app, POLICIES, **options)
    return app


async def test_server_principal_per_connection_and_per_call() -> None:
    seen: list[str] = []

    def who(ctx: Any) -> Principal:
        seen.append(ctx.method)
        return GUEST

    with anyio.fail_after(30):
        async with Client(server(principal=ADMIN)) as client:
            assert not (await client.call_tool("deploy", {"target": "prod"})).is_error
        async with Client(server(principal=who)) as client:
            with pytest.raises(MCPError) as caught:
                await client.call_tool("deploy", {"target": "prod"})
    assert caught.value.data["validationErrors"][0]["interceptor"] == "integ-needs-admin"
    assert "tools/call" in seen


async def test_client_principal_per_call_overrides_the_connection() -> None:
    policies = PolicyClient(POLICIES, principal=GUEST)
    with anyio.fail_after(30):
        async with Client(server(principal=ADMIN)) as raw:
            client = policies.bind(raw)
            with pytest.raises(PolicyBlocked):
                await client.call_tool("deploy", {"target": "prod"})
            done = await client.call_tool("deploy", {"target": "prod"}, principal=ADMIN)
    assert not done.is_error

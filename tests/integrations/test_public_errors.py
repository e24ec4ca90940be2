"""The public API says what went wrong: one error base, readable refusals, early refusals.

A developer catching `PolicycError` catches every error policyc raises on
purpose; a refusal reads, in a traceback or a log, which interceptor and
rule refused and why (server middleware and client wrapper alike), while the
wire keeps the SEP's error unchanged; a server install_policies cannot serve
is refused when installing, not with "Internal server error" on every call;
a lone path is one path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError

from policy_engine.chain import ChainConfigError
from policy_engine.compiler import CompileError, compile_policies, compile_sources
from policy_engine.integrations import PolicyBlocked, PolicyClient, install_policies
from policy_engine.wire import InterceptorError, PolicycError, Principal

HERE = Path(__file__).resolve().parent
POLICY_FILE = HERE / "policies" / "integ_test.policy"
POLICIES = compile_policies([POLICY_FILE])
GUEST = Principal(type="user", id="bob", claims={"roles": []})
DENIAL = "integ-needs-admin (rule needs-admin): this tool needs the admin role"


def deployer() -> MCPServer:
    app = MCPServer("deployer")

    @app.tool()
    def deploy(target: str) -> str:
        """Deploy (admins only)."""
        return f"deployed {target}"

    return app


async def test_the_server_middleware_raises_a_refusal_that_names_rule_and_reason() -> None:
    app = deployer()
    install_policies(app, POLICIES, principal=GUEST)
    raised: list[BaseException] = []

    async def outermost(ctx: Any, call_next: Any) -> Any:
        """What an application's own logging middleware sees."""
        try:
            return await call_next(ctx)
        except Exception as err:
            raised.append(err)
            raise

    app.middleware.insert(0, outermost)
    with anyio.fail_after(30):
        async with Client(app) as client:
            with pytest.raises(MCPError) as caught:
                await client.call_tool("deploy", {"target": "prod"})
    # The wire is the SEP's error, as before.
    assert caught.value.code == -32602
    assert caught.value.message == "Interceptor validation failed"
    assert caught.value.data["validationErrors"][0]["interceptor"] == "integ-needs-admin"
    (blocked,) = raised
    assert isinstance(blocked, PolicyBlocked) and isinstance(blocked, PolicycError)
    assert str(blocked) == f"tools/call blocked by policy: {DENIAL}"


async def test_the_client_wrapper_raises_the_same_refusal() -> None:
    policies = PolicyClient(POLICIES, principal=GUEST)
    with anyio.fail_after(30):
        async with Client(deployer()) as raw:
            client = policies.bind(raw)
            with pytest.raises(PolicycError) as caught:
                await client.call_tool("deploy", {"target": "prod"})
    blocked = caught.value
    assert isinstance(blocked, PolicyBlocked)
    assert str(blocked) == f"tools/call blocked by policy: {DENIAL}"
    assert blocked.error.code == blocked.code == -32602
    assert blocked.data["validationErrors"][0]["interceptor"] == "integ-needs-admin"
    assert blocked.run is not None and blocked.run.aborted_at is not None


class FastMCPLike:
    """The shape of fastmcp's `FastMCP`: a `middleware` list of its own middleware type."""

    def __init__(self) -> None:
        self.middleware: list[Any] = []


def test_install_policies_refuses_a_server_it_cannot_serve_at_install_time() -> None:
    """Before, the middleware went onto the list and every call answered
    "Internal server error"."""
    server = FastMCPLike()
    with pytest.raises(TypeError) as caught:
        install_policies(server, POLICIES)
    assert isinstance(caught.value, PolicycError)
    assert "MCPServer" in str(caught.value) and "policyc gateway" in str(caught.value)
    assert server.middleware == []


def test_every_deliberate_error_shares_one_base() -> None:
    for kind in (CompileError, InterceptorError, PolicyBlocked, ChainConfigError):
        assert issubclass(kind, PolicycError), kind


def test_a_compile_error_reads_as_its_diagnostics() -> None:
    with pytest.raises(CompileError) as caught:
        compile_sources({"bad.policy": "validator v {\n  on tools/call request\n  deny if\n}\n"})
    text = str(caught.value)
    assert text.startswith("1 error(s) in the policy set\n")
    assert "bad.policy" in text and caught.value.diagnostics_text in text


def test_one_path_given_as_a_str_or_a_path_is_one_path() -> None:
    """A str used to be iterated character by character: `p`, `o`, ... and `/`."""
    for given in (str(POLICY_FILE), POLICY_FILE):
        policies = compile_policies(given)
        assert [d.name for d in policies.descriptors()] == [d.name for d in POLICIES.descriptors()]


def test_a_path_list_of_anything_else_is_refused_at_once() -> None:
    with pytest.raises(TypeError):
        compile_policies(str(POLICY_FILE).encode())  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        compile_policies([POLICY_FILE, 3])  # type: ignore[list-item]

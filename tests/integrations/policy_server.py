"""A high-level MCPServer with a few tools and policies installed: stdio, or HTTP with a port.

``--expose`` installs the policies with ``expose_interceptors=True``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

from policy_engine.compiler import compile_policies
from policy_engine.integrations import install_policies

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
POLICIES = [HERE / "policies" / "integ_test.policy", ROOT / "policies" / "secrets.policy"]


def build(*, expose: bool = False) -> MCPServer:
    server = MCPServer("policy-demo")

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text back."""
        return text

    @server.tool()
    def shell_exec(command: str) -> str:
        """Would run a shell command (policies block it)."""
        return f"ran {command}"

    @server.tool()
    def internal_debug() -> str:
        """A debugging tool policies hide."""
        return "debug state"

    @server.tool()
    def deploy(target: str) -> str:
        """Deploy (admins only)."""
        return f"deployed {target}"

    @server.tool()
    def fetch_config() -> str:
        """A config that carries a credential."""
        return "token=ghp_abcdefghijklmnopqrstuvwxyz0123456789 region=eu"

    install_policies(server, compile_policies(POLICIES), expose_interceptors=expose)
    return server


if __name__ == "__main__":
    args = sys.argv[1:]
    app = build(expose="--expose" in args)
    ports = [arg for arg in args if arg != "--expose"]
    if ports:
        app.run(transport="streamable-http", host="127.0.0.1", port=int(ports[0]))
    else:
        app.run()

"""A FastMCP server with policy_server.py's tools and the same policies, through
FastMCP's own middleware: stdio, or streamable HTTP with a port.

``--result`` blocks tool calls with an ``isError`` result instead of an error.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from fastmcp import FastMCP

from policy_engine.compiler import compile_policies
from policy_engine.integrations.fastmcp import FastMCPPolicyMiddleware

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
POLICIES = [HERE / "policies" / "integ_test.policy", ROOT / "policies" / "secrets.policy"]


def build(**options: Any) -> FastMCP:
    server = FastMCP("policy-demo")

    @server.tool
    def echo(text: str) -> str:
        """Echo the text back."""
        return text

    @server.tool
    def shell_exec(command: str) -> str:
        """Would run a shell command (policies block it)."""
        return f"ran {command}"

    @server.tool
    def internal_debug() -> str:
        """A debugging tool policies hide."""
        return "debug state"

    @server.tool
    def deploy(target: str) -> str:
        """Deploy (admins only)."""
        return f"deployed {target}"

    @server.tool
    def fetch_config() -> str:
        """A config that carries a credential."""
        return "token=ghp_abcdefghijklmnopqrstuvwxyz0123456789 region=eu"

    server.add_middleware(FastMCPPolicyMiddleware(compile_policies(POLICIES), **options))
    return server


if __name__ == "__main__":
    args = sys.argv[1:]
    app = build(block_style="result" if "--result" in args else "error")
    ports = [arg for arg in args if arg != "--result"]
    if ports:
        app.run(transport="http", host="127.0.0.1", port=int(ports[0]), show_banner=False)
    else:
        app.run(show_banner=False)

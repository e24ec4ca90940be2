"""An application's MCP server (a tool, a prompt, a resource) for the compatibility tests.

With ``--interceptors`` it also answers the SEP methods through
``add_interceptor_methods``, the one function `policyc serve` and
``expose_interceptors`` use; without, it is a server that never heard of them.
"""

from __future__ import annotations

import sys

from fixture_providers import DEFAULT_SPECS, FixtureProvider
from mcp.server.mcpserver import MCPServer

from policy_engine.server import InterceptorService, add_interceptor_methods, static_source

server = MCPServer("optional-interceptors")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.prompt()
def greet(name: str) -> str:
    """Greet someone."""
    return f"Hello {name}"


@server.resource("memo://note")
def note() -> str:
    """A fixed note."""
    return "a note"


if __name__ == "__main__":
    if "--interceptors" in sys.argv:
        service = InterceptorService(static_source(FixtureProvider(DEFAULT_SPECS)))
        add_interceptor_methods(server._lowlevel_server, service)
    server.run()

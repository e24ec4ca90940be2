"""An MCP server of your own with policies in code, behind policyc's resource server.

Run as ``python in_code_server.py ISSUER_URL RESOURCE PORT``: an ``MCPServer``
whose ``install_policies`` takes each call's principal from the verified token
(``verified_principal``), wrapped in ``ResourceServerMiddleware`` and served by
uvicorn on 127.0.0.1:PORT.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import uvicorn
from mcp.server.mcpserver import MCPServer

from policy_engine.compiler import compile_policies
from policy_engine.integrations import install_policies
from policy_engine.server.oauth import OAuthSettings
from policy_engine.server.resource_server import ResourceServerMiddleware, verified_principal

ROLES = Path(__file__).resolve().parents[2] / "examples" / "identity" / "role-tools.policy"


def build(issuer: str, resource: str) -> ResourceServerMiddleware:
    server = MCPServer("in-code")

    @server.tool()
    def lookup_user(user: str) -> str:
        """An ops tool."""
        return f"{user}: found"

    install_policies(server, compile_policies([ROLES]), principal=verified_principal)
    verifier = OAuthSettings(issuer=issuer, resource=resource).verifier()
    anyio.run(verifier.start)
    return ResourceServerMiddleware(server.streamable_http_app(), verifier)


if __name__ == "__main__":
    app = build(sys.argv[1], sys.argv[2])
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[3]), log_level="warning")

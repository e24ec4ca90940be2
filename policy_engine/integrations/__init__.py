"""Policies inside your own MCP server or client, around the same interception core.

The gateway puts policies between two processes; these put them inside one:
:func:`install_policies` in front of an ``mcp`` ``Server`` or ``MCPServer``
(through the SDK's provisional ``Server.middleware`` seam), and
:class:`PolicyClient` around the SDK's ``Client``. Both are thin hosts around
``policy_engine.interception``, so a policy decides the same way in all three.

Layers below: ``interception``, ``chain``, ``server`` (its SEP handlers), ``wire``
(and the ``mcp`` SDK).
"""

from .blocked import PolicyBlocked
from .chain import local_chain
from .client import PolicyClient
from .server import PolicyMiddleware, UnsupportedServer, install_policies, open_policies

__all__ = [
    "PolicyBlocked",
    "PolicyClient",
    "PolicyMiddleware",
    "UnsupportedServer",
    "install_policies",
    "local_chain",
    "open_policies",
]

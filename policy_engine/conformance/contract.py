"""The runner-to-server contract: how a server under test learns its fixture's interceptors.

One home for each name in it; docs/conformance.md describes the contract for
SDK authors. Per fixture the runner writes the fixture's ``interceptors``
array to a fresh JSON file, starts the server command with the file's path in
``INTERCEPTORS_ENV`` (and in place of ``INTERCEPTORS_PLACEHOLDER`` wherever the
command line holds it), runs the steps over MCP, and stops the process.
"""

from __future__ import annotations

INTERCEPTORS_ENV = "MCP_CONFORMANCE_INTERCEPTORS"
"""Environment variable holding the path of the fixture's interceptors file."""

FIXTURE_ENV = "MCP_CONFORMANCE_FIXTURE"
"""Environment variable holding the fixture's id, for the server's own logs."""

INTERCEPTORS_PLACEHOLDER = "{interceptors}"
"""Replaced by the interceptors file's path in the server command and URL."""

PORT_PLACEHOLDER = "{port}"
"""Replaced by a free TCP port on 127.0.0.1 in the server command and URL (HTTP servers)."""

UNSUPPORTED_MARKER = "conformance-unsupported:"
"""A server that cannot bind a behaviour writes this, then the reason, on a stderr
line and exits without serving; the runner reports the fixture as unsupported."""

UNSUPPORTED_EXIT = 3
"""The exit status that goes with the unsupported marker."""

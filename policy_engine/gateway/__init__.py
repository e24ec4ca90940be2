"""``policyc gateway``: a transparent MCP proxy with the policy chain on every message.

A thin host around :mod:`policy_engine.interception`. Modules, one job each:

- ``backend``: one backend server over stdio or streamable HTTP, ids renumbered
- ``session``: one client connection, routed to its backends through the chain
- ``federation``: several backends as one server (merged lists, collision names)
- ``config``: the TOML config file and its ``--check``
- ``decision_log``: one JSON line per chain run
- ``serve`` / ``http``: the stdio and streamable HTTP fronts
- ``stateless`` / ``shared``: the HTTP fronts without sessions (``--stateless``,
  2026-07-28), many callers multiplexed into one shared gateway session
"""

from .backend import BackendConfigError, BackendSpec
from .config import ConfigError, load_config, options_from_flags
from .decision_log import GatewayDecisionLog
from .serve import GatewayOptions, open_interception, run_gateway, serve_stdio
from .session import GatewaySession, SessionOptions

__all__ = [
    "BackendConfigError",
    "BackendSpec",
    "ConfigError",
    "GatewayDecisionLog",
    "GatewayOptions",
    "GatewaySession",
    "SessionOptions",
    "load_config",
    "open_interception",
    "options_from_flags",
    "run_gateway",
    "serve_stdio",
]

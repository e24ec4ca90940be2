"""The embedded SEP-2624 interceptor server.

Serves any ``InterceptorProvider`` over MCP (stdio or streamable HTTP) with
``interceptors/list`` and ``interceptor/invoke``. Modules, one job each:

- ``source``: the provider source (a zero-argument callable) and a swappable cell
- ``catalog``: per-provider descriptor index and the advertised capability
- ``service``: the two methods, transport-free, every failure a SEP error code
- ``app``: the SDK server: method registration, capability on both handshakes
  (``add_interceptor_methods`` also serves them from an application's own server)
- ``framing`` / ``stdio``: a stdio transport that answers every line
- ``fastpath``: answers interceptor calls on stdio without the SDK dispatch stack
- ``http_app`` / ``auth``: streamable HTTP behind uvicorn, bearer-token auth
- ``http_guard`` / ``http_sessions`` / ``http_connections``: body bounds and
  strict framing, the session cap with eviction, header timeout and connection cap
- ``limits`` / ``rejections``: every transport bound with its default; refusals logged once
- ``decision_log``: one JSON line per invoke
- ``reload``: polling file watcher that swaps providers atomically
- ``run``: ``run_server(ServerOptions)``, everything ``policyc serve`` does, for a library
"""

from ..wire.constants import INVOKE_METHOD, INVOKE_METHODS, LIST_METHOD
from .app import add_interceptor_methods, build_server
from .auth import AuthConfigError, token_from_env
from .catalog import EXTENSION_ID
from .decision_log import Decision, DecisionLog
from .http_app import ListenError, build_http_app, listen, serve_http
from .limits import TransportLimits
from .reload import CompileFailure, Reloader
from .run import ServerOptions, run_server
from .serve import serve_stdio
from .service import InterceptorService
from .source import ProviderCell, ProviderSource, static_source

__all__ = [
    "EXTENSION_ID",
    "INVOKE_METHOD",
    "INVOKE_METHODS",
    "LIST_METHOD",
    "AuthConfigError",
    "CompileFailure",
    "Decision",
    "DecisionLog",
    "InterceptorService",
    "ListenError",
    "ProviderCell",
    "ProviderSource",
    "Reloader",
    "ServerOptions",
    "TransportLimits",
    "add_interceptor_methods",
    "build_http_app",
    "build_server",
    "listen",
    "run_server",
    "serve_http",
    "serve_stdio",
    "static_source",
    "token_from_env",
]

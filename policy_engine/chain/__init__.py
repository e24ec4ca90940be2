"""The SEP-2624 chain executor over local policy sets and remote interceptor servers.

Layers below: ``wire`` only. A gateway or the CLI opens a chain with
:meth:`InterceptorChain.connect`, runs :meth:`InterceptorChain.execute` per
message, and maps a failed result to a JSON-RPC error with :func:`chain_error`.
"""

from .config import ChainConfig, load_chain_config
from .discovery import discover_hosts
from .entry import ChainEntry, Host, check_narrowing
from .errors import ChainConfigError, DiscoveryError, chain_error
from .execution import execute_chain, select_entries
from .interceptor_chain import InterceptorChain, side_for
from .provider import ChainProvider
from .remote import RemoteProvider
from .servers import ServerSpec
from .settings import Selector, build_entries, merge_overrides
from .tracing import ChainTracer, TraceSpan

__all__ = [
    "ChainConfig",
    "ChainConfigError",
    "ChainEntry",
    "ChainProvider",
    "ChainTracer",
    "DiscoveryError",
    "Host",
    "InterceptorChain",
    "RemoteProvider",
    "Selector",
    "ServerSpec",
    "TraceSpan",
    "build_entries",
    "chain_error",
    "check_narrowing",
    "discover_hosts",
    "execute_chain",
    "load_chain_config",
    "merge_overrides",
    "select_entries",
    "side_for",
]

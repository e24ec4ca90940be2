"""Build the chain and interception core once, then serve client connections."""

from __future__ import annotations

import logging
import secrets
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from policy_engine.chain import InterceptorChain, Selector, ServerSpec
from policy_engine.flow import Fingerprinter
from policy_engine.interception import BlockStyle, ChainRun, Interception, Role
from policy_engine.observability import metrics
from policy_engine.wire import InterceptorOverrides, InterceptorProvider

from .backend import BackendSpec
from .decision_log import observers
from .expose import capability, exposed_service
from .session import GatewaySession, SessionOptions

logger = logging.getLogger("policyc.gateway")


@dataclass
class GatewayOptions:
    """Everything ``policyc gateway`` is told, from flags or a config file."""

    backends: list[BackendSpec] = field(default_factory=list)
    policies: list[Path] = field(default_factory=list)
    providers: list[InterceptorProvider] = field(default_factory=list)
    interceptors: list[ServerSpec] = field(default_factory=list)
    overrides: dict[Selector, InterceptorOverrides] = field(default_factory=dict)
    side: Role = "client"
    block_style: BlockStyle = "error"
    expose_interceptors: bool = False
    chain_timeout_ms: int | None = None
    interceptor_timeout_ms: int | None = None
    listen: tuple[str, int] | None = None
    auth_token: str | None = field(default=None, repr=False)
    stateless: bool = False
    flow: dict[str, Any] = field(default_factory=dict)
    """The config file's ``[flow]`` table (``--flow-*`` options by their parameter names)."""
    session_key: Fingerprinter | None = field(default=None, repr=False)
    """Signs ``--stateless`` session ids; every replica needs the same (``--flow-key-env``)."""
    allowed_hosts: tuple[str, ...] = ()
    decision_log: str | None = None
    record: str | None = None
    log_payloads: bool = False
    verbose: bool = False
    source: Path | None = None

    def merge_flags(
        self,
        *,
        paths: tuple[str, ...] = (),
        backends: tuple[str, ...] = (),
        interceptors: tuple[str, ...] = (),
        side: str | None = None,
        block_style: str | None = None,
        expose_interceptors: bool = False,
        backend_timeout: float | None = None,
        on_backend_exit: str | None = None,
        stateless: bool = False,
        decision_log: str | None = None,
        record: str | None = None,
        log_payloads: bool = False,
        verbose: bool = False,
    ) -> None:
        """Command-line flags add to (lists) or win over (settings) the config file."""
        from .config import ConfigError

        self.policies.extend(Path(p) for p in paths)
        extra: dict[str, Any] = {}
        if backend_timeout is not None:
            extra["timeout_s"] = backend_timeout
        if on_backend_exit is not None:
            extra["on_exit"] = on_backend_exit
        try:
            self.backends.extend(BackendSpec.parse(text, **extra) for text in backends)
            self.interceptors.extend(ServerSpec.parse(text) for text in interceptors)
        except ValueError as err:
            raise ConfigError(str(err)) from None
        if extra:
            self.backends = [replace(spec, **extra) for spec in self.backends]
        names = [spec.name for spec in self.backends]
        if len(set(names)) != len(names):
            raise ConfigError("two backends share a name; give each a distinct NAME")
        if side is not None:
            self.side = side  # type: ignore[assignment]
        if block_style is not None:
            self.block_style = block_style  # type: ignore[assignment]
        self.expose_interceptors = self.expose_interceptors or expose_interceptors
        self.stateless = self.stateless or stateless
        self.decision_log = decision_log or self.decision_log
        self.record = record or self.record
        self.log_payloads = self.log_payloads or log_payloads
        self.verbose = self.verbose or verbose


@asynccontextmanager
async def open_interception(
    options: GatewayOptions, observer: Any = None
) -> AsyncIterator[Interception]:
    """Connect the interceptor servers, discover everything, and yield the core."""
    local: Mapping[str, InterceptorProvider] = {
        f"local-{i}": provider for i, provider in enumerate(options.providers, start=1)
    }
    async with InterceptorChain.connect(
        local=local,
        servers=options.interceptors,
        overrides=options.overrides,
        default_timeout_ms=options.interceptor_timeout_ms,
        errlog=sys.stderr,
    ) as chain:
        metrics.policies_loaded()
        yield Interception(
            chain,
            acts_for=options.side,
            block_style=options.block_style,
            chain_timeout_ms=options.chain_timeout_ms,
            observer=observers(metrics.chain_observer, observer),
        )


def session_options(
    options: GatewayOptions,
    interception: Interception,
    session_id: str | None = None,
    *,
    shared: bool = False,
) -> SessionOptions:
    """``shared``: the session serves many callers, one request at a time each (no
    stream back to a client). Every session learns a filtered list before the first
    call it governs: a client that never lists cannot use what the list hides."""
    service = exposed_service(interception.chain) if options.expose_interceptors else None
    return SessionOptions(
        backends=list(options.backends),
        expose_interceptors=options.expose_interceptors,
        session_id=session_id,
        errlog=sys.stderr,
        interceptor_capability=capability(service) if service is not None else {},
        service=service,
        back_channel=not shared,
        learn_lists=True,
    )


async def serve_stdio(options: GatewayOptions, interception: Interception) -> str | None:
    """Serve this process's stdin/stdout until the client leaves; the fatal reason, if any."""
    from policy_engine.server.stdio import stdio_transport

    # One process, one session; its id is unique so that gateways sharing a flow store
    # (or a log collector) never mistake one another's sessions for their own.
    session_id = f"stdio-{secrets.token_hex(8)}"
    async with stdio_transport() as (read_stream, write_stream):
        session = GatewaySession(
            interception, session_options(options, interception, session_id), write_stream
        )
        await session.run(read_stream)
        return session.fatal


def log_observer(run: ChainRun) -> None:
    logger.debug(
        "chain %s %s [%s] server=%s -> %s (%.3f ms)",
        run.event,
        run.phase,
        run.side,
        run.server,
        run.result.status,
        run.result.total_duration_ms,
    )


async def run_gateway(options: GatewayOptions, log: Any = None) -> str | None:
    """Run until the client leaves (stdio) or the process is stopped (HTTP)."""
    observer = log if log is not None else (log_observer if options.verbose else None)
    async with open_interception(options, observer) as interception:
        logger.info(
            "%d interceptor(s) in front of %s (acting for the %s)",
            len(interception.chain.entries),
            ", ".join(spec.name for spec in options.backends),
            options.side,
        )
        if options.listen is not None:
            from .http import serve_http

            return await serve_http(options, interception)
        return await serve_stdio(options, interception)

"""Build the chain and interception core once, then serve client connections."""

from __future__ import annotations

import logging
import os
import secrets
import signal
import sys
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from policy_engine.chain import InterceptorChain, Selector, ServerSpec
from policy_engine.flow import Fingerprinter
from policy_engine.interception import BlockStyle, ChainRun, Interception, Role
from policy_engine.observability import metrics, tracing
from policy_engine.server.limits import DEFAULT_PAYLOAD_BYTES
from policy_engine.server.oauth import OAuthSettings
from policy_engine.wire import InterceptorOverrides, InterceptorProvider, Principal

from .backend import BackendSpec
from .decision_log import observers
from .expose import capability, exposed_service
from .session import GatewaySession, SessionOptions

if TYPE_CHECKING:
    from .reload import GatewayReload

logger = logging.getLogger("policyc.gateway")


@dataclass(frozen=True)
class SessionLimits:
    """Bounds on the stateful HTTP sessions clients open (docs/gateway.md, "What a
    session costs"): every session that finished its handshake owns its backends."""

    max_sessions: int = 256
    """Open sessions in all; past it a new one gets HTTP 503."""
    per_client: int = 32
    """Open sessions from one client address; past it a new one gets HTTP 429."""
    handshake_timeout_s: float = 10.0
    """Seconds from the ``initialize`` answer to the client's ``notifications/initialized``;
    a session that does not finish its handshake in time is closed."""


@dataclass
class GatewayOptions:
    """Everything ``policyc gateway`` is told, from flags or a config file."""

    backends: list[BackendSpec] = field(default_factory=list)
    policies: list[Path] = field(default_factory=list)
    providers: list[InterceptorProvider] = field(default_factory=list)
    interceptors: list[ServerSpec] = field(default_factory=list)
    overrides: dict[Selector, InterceptorOverrides] = field(default_factory=dict)
    configs: dict[Selector, dict[str, Any]] = field(default_factory=dict)
    """Per-interceptor params (``[overrides.NAME] config``), sent with every invocation."""
    side: Role = "client"
    block_style: BlockStyle = "error"
    expose_interceptors: bool = False
    chain_timeout_ms: int | None = None
    interceptor_timeout_ms: int | None = None
    listen: tuple[str, int] | None = None
    auth_token: str | None = field(default=None, repr=False)
    oauth: OAuthSettings | None = None
    """HTTP: accept the issuer's JWTs for this resource; the principal comes from each."""
    principal: Principal | None = None
    """stdio: who the one client is (``[principal]`` or ``--principal-id``)."""
    stateless: bool = False
    flow: dict[str, Any] = field(default_factory=dict)
    """The config file's ``[flow]`` table (``--flow-*`` options by their parameter names)."""
    limits: dict[str, Any] = field(default_factory=dict)
    """The config file's ``[limits]`` table (``--limit-*`` options by their parameter names)."""
    session_key: Fingerprinter | None = field(default=None, repr=False)
    """Signs ``--stateless`` session ids; every replica needs the same (``--flow-key-env``)."""
    allowed_hosts: tuple[str, ...] = ()
    sessions: SessionLimits = field(default_factory=lambda: SessionLimits())
    """HTTP: how many stateful sessions, from one address and in all, and how long a
    session may take to finish its handshake."""
    decision_log: str | None = None
    record: str | None = None
    log_payloads: bool = False
    verbose: bool = False
    source: Path | None = None
    max_payload_bytes: int = DEFAULT_PAYLOAD_BYTES
    """`--max-payload-bytes`: the policies' payload bound; stdio lines and HTTP bodies
    may be `ENVELOPE_BYTES` more (`message_limit`), the same on both fronts."""
    reload: GatewayReload | None = field(default=None, repr=False)
    """Serves SIGHUP and ``--watch``; its policy set replaces ``providers``."""
    reopen: Callable[[], None] | None = field(default=None, repr=False)
    """Reopens the decision log and the traffic record (SIGHUP)."""

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
        backend_env: tuple[str, ...] = (),
        pass_env: tuple[str, ...] = (),
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
        added = backend_environment(backend_env, pass_env)
        if added:
            self.backends = [spec.with_env(added) for spec in self.backends]
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


def backend_environment(assigned: tuple[str, ...], passed: tuple[str, ...]) -> dict[str, str]:
    """``--backend-env NAME=VALUE`` and ``--pass-env NAME`` as one environment to add.

    A stdio backend inherits only the SDK's short list (HOME, PATH, SHELL, TERM,
    USER, ...); a secret such as a token reaches it only when the operator says
    so. A ``--pass-env`` variable that is not set is an error: the backend would
    start without the credential it was meant to get.
    """
    from .config import ConfigError

    env: dict[str, str] = {}
    for text in assigned:
        name, sep, value = text.partition("=")
        if not sep or not name:
            raise ConfigError("--backend-env wants NAME=VALUE")  # the text may be a secret
        env[name] = value
    for name in passed:
        if name not in os.environ:
            raise ConfigError(f"--pass-env {name}: the environment variable is not set")
        env[name] = os.environ[name]
    return env


@asynccontextmanager
async def open_interception(
    options: GatewayOptions, observer: Any = None
) -> AsyncIterator[Interception]:
    """Connect the interceptor servers, discover everything, and yield the core."""
    providers = options.providers
    if options.reload is not None:
        providers = [options.reload.provider()]
    local: Mapping[str, InterceptorProvider] = {
        f"local-{i}": provider for i, provider in enumerate(providers, start=1)
    }
    async with InterceptorChain.connect(
        local=local,
        servers=options.interceptors,
        overrides=options.overrides,
        configs=options.configs,
        default_timeout_ms=options.interceptor_timeout_ms,
        errlog=sys.stderr,
    ) as chain:
        metrics.policies_loaded()
        interception = Interception(
            chain,
            acts_for=options.side,
            block_style=options.block_style,
            chain_timeout_ms=options.chain_timeout_ms,
            observer=observers(metrics.chain_observer, observer),
            tracer=tracing.active(),
        )
        if options.reload is not None:
            options.reload.attach(interception, options.overrides, options.configs)
        yield interception


def session_options(
    options: GatewayOptions,
    interception: Interception,
    session_id: str | None = None,
    *,
    shared: bool = False,
) -> SessionOptions:
    """``shared``: the session serves many callers, one request at a time each (no
    stream back to a client)."""
    service = exposed_service(interception.chain) if options.expose_interceptors else None
    return SessionOptions(
        backends=list(options.backends),
        expose_interceptors=options.expose_interceptors,
        session_id=session_id,
        errlog=sys.stderr,
        interceptor_capability=capability(service) if service is not None else {},
        service=service,
        back_channel=not shared,
    )


async def serve_stdio(options: GatewayOptions, interception: Interception) -> str | None:
    """Serve this process's stdin/stdout until the client leaves; the fatal reason, if any."""
    from policy_engine.server.limits import message_limit
    from policy_engine.server.stdio import stdio_transport

    # One process, one session; its id is unique so that gateways sharing a flow store
    # (or a log collector) never mistake one another's sessions for their own.
    session_id = f"stdio-{secrets.token_hex(8)}"
    line_limit = message_limit(options.max_payload_bytes)
    async with stdio_transport(max_line_bytes=line_limit) as (read_stream, write_stream):
        session = GatewaySession(
            interception, session_options(options, interception, session_id), write_stream
        )
        session.chain.principal = options.principal
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
        async with anyio.create_task_group() as tg:
            if threading.current_thread() is threading.main_thread():  # signals need it
                tg.start_soon(_operator_signals, options)
            if options.listen is not None:
                from .http import serve_http

                fatal = await serve_http(options, interception)
            else:
                fatal = await serve_stdio(options, interception)
            tg.cancel_scope.cancel()
        return fatal


async def _operator_signals(options: GatewayOptions) -> None:
    """SIGHUP reopens the logs and reloads the policies (logrotate sends it); it never
    stops the gateway."""
    reopen = options.reopen or (lambda: None)
    if options.reload is not None:
        await options.reload.run(reopen)
        return
    with anyio.open_signal_receiver(signal.SIGHUP) as signals:
        async for _ in signals:
            logger.info("SIGHUP: reopening logs")
            reopen()

"""`policyc gateway`: a transparent MCP proxy that runs the policy chain on every message.

stdio towards the client by default, streamable HTTP with `--http`; each
`--backend NAME=CMD_OR_URL` is a stdio command or an HTTP URL. `--config FILE`
holds the same settings in TOML; `--config FILE --check` validates it and exits.
Logs and `--verbose` tracing go to stderr, never stdout (the stdio wire).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import click

from ..compiler.bounds import DEFAULT_MAX_BYTES, Limits
from ..compiler.flows import FlowRuntime
from ..compiler.rate_limits import RateLimitRuntime
from ..gateway.serve import GatewayOptions, SessionLimits
from .auth_options import auth_options, oauth_settings, pop_auth_flags, started_verifier
from .exit_codes import ExitCode
from .flow_options import flow_options, flow_runtime
from .inputs import compile_or_exit, fail
from .metrics_options import count_store_errors, metrics_listen_option, start_metrics_listener
from .rate_limit_options import rate_limit_options, rate_limit_runtime
from .serve import parse_listen
from .tracing_options import start_tracing, tracing_options

if TYPE_CHECKING:
    from ..compiler import PolicySet
    from ..gateway import GatewayDecisionLog
    from ..gateway.decision_log import TrafficRecorder
    from ..gateway.reload import GatewayReload

_LIMITS = SessionLimits()


def _flag_or(config: dict[str, Any], name: str, flag: Any) -> Any:
    """A ``--flow-*`` or ``--limit-*`` flag given on the command line wins over the
    config's ``[flow]`` or ``[limits]``."""
    source = click.get_current_context().get_parameter_source(name)
    given = source is not None and source is not click.core.ParameterSource.DEFAULT
    return flag if given or name not in config else config[name]


def _session_limits(
    limits: SessionLimits,
    max_sessions: int | None,
    per_client: int | None,
    handshake_timeout: float | None,
) -> SessionLimits:
    """The flags given win over the config file's ``[http]`` values."""
    given: dict[str, Any] = {
        "max_sessions": max_sessions,
        "per_client": per_client,
        "handshake_timeout_s": handshake_timeout,
    }
    return replace(limits, **{k: v for k, v in given.items() if v is not None})


def _unshared_state(
    options: GatewayOptions, flow_store: str | None, policy_set: PolicySet
) -> str | None:
    """Why ``--stateless`` replicas cannot serve this set without a shared store, if they
    cannot: at start-up and on every reload alike (an edit must not add such rules)."""
    if not options.stateless or flow_store is not None:
        return None
    if policy_set.has_flow_rules:
        return (
            "--stateless with flow rules needs --flow-store: a replica would remember only "
            "what it saw, and a flow split across replicas would pass"
        )
    if policy_set.has_rate_limits:
        return (
            "--stateless with rate limits needs --flow-store: each replica would count only "
            "what it saw, and N replicas would let N times the limit through"
        )
    return None


def _reload(
    options: GatewayOptions,
    compile_with: tuple[Limits, FlowRuntime, RateLimitRuntime],
    flow_store: str | None,
    initial: PolicySet,
    *,
    watch: bool,
    allow_shrink: bool,
) -> GatewayReload:
    """The policy files' reloader: serve's rules (last good set kept, no shrinking).

    ``compile_with`` is the first compile's (limits, flows, rate limits): a reloaded
    set keeps the payload bound, the sessions' flow state and the limits' counters."""
    from ..compiler import compile_policies
    from ..gateway.reload import GatewayReload

    limits, flows, counters = compile_with

    def load(paths: Sequence[Path]) -> PolicySet:
        policy_set = compile_policies(tuple(str(p) for p in paths), limits, flows, counters)
        refusal = _unshared_state(options, flow_store, policy_set)
        if refusal is not None:  # the reloader keeps the last good set and logs this
            raise ValueError(refusal)
        return policy_set

    return GatewayReload(
        options.policies, load, watch=watch, allow_shrink=allow_shrink, initial=initial
    )


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(exists=True))
@click.option("--backend", "backends", multiple=True, help="NAME=COMMAND or NAME=URL (repeatable).")
@click.option(
    "--interceptors",
    "interceptor_servers",
    multiple=True,
    help="A remote interceptor server: COMMAND or URL (repeatable).",
)
@click.option("--config", "config_path", type=click.Path(), help="A TOML gateway config file.")
@click.option("--check", is_flag=True, help="With --config: validate the file and exit.")
@click.option("--http", "listen", help="Serve streamable HTTP on HOST:PORT instead of stdio.")
@click.option("--auth-token-env", help="HTTP only: require this env var's value as bearer token.")
@click.option(
    "--stateless",
    is_flag=True,
    help="HTTP only: no server-side sessions, so replicas can share a load balancer "
    "(needs --flow-key-env; flow rules need --flow-store).",
)
@click.option(
    "--max-sessions",
    type=click.IntRange(min=1),
    default=None,
    help=f"HTTP only: open sessions in all (default: {_LIMITS.max_sessions}); past it, HTTP 503.",
)
@click.option(
    "--max-sessions-per-client",
    type=click.IntRange(min=1),
    default=None,
    help="HTTP only: open sessions from one client address "
    f"(default: {_LIMITS.per_client}); past it, HTTP 429.",
)
@click.option(
    "--handshake-timeout",
    type=click.FloatRange(min=0.001),
    default=None,
    help="HTTP only: seconds a session may take to send notifications/initialized once "
    f"its initialize is answered (default: {_LIMITS.handshake_timeout_s:g}); then it is closed.",
)
@click.option(
    "--side",
    type=click.Choice(["client", "server"]),
    default=None,
    help="Whose side of the trust boundary the gateway acts for (default: client).",
)
@click.option(
    "--block-style",
    type=click.Choice(["error", "result"]),
    default=None,
    help="A blocked tools/call: JSON-RPC error (default) or an isError result.",
)
@click.option("--expose-interceptors", is_flag=True, help="Advertise the interceptors extension.")
@click.option("--backend-timeout", type=click.FloatRange(min=0.001), help="Seconds per request.")
@click.option(
    "--backend-env",
    multiple=True,
    metavar="NAME=VALUE",
    help="Set NAME for every stdio backend (repeatable); they inherit only HOME, PATH, "
    "SHELL, TERM, USER and the like.",
)
@click.option(
    "--pass-env",
    multiple=True,
    metavar="NAME",
    help="Pass the gateway's own NAME to every stdio backend (repeatable; must be set).",
)
@click.option(
    "--on-backend-exit",
    type=click.Choice(["restart", "exit"]),
    default=None,
    help="What to do when a backend dies (default: restart).",
)
@click.option("--decision-log", help="One JSON line per chain run to FILE, or - for stderr.")
@click.option("--log-payloads", is_flag=True, help="Include passed payloads in the decision log.")
@click.option(
    "--decision-log-complete",
    is_flag=True,
    help="Write every decision in full (no per-session budget) and fail a request whose "
    "decision cannot be logged instead of dropping the line.",
)
@click.option(
    "--record",
    metavar="FILE",
    help="Append every chain run's payload as received and its decision to FILE, for "
    "`policyc replay` (created owner-only: it holds raw payloads).",
)
@click.option(
    "--max-payload-bytes",
    type=click.IntRange(1),
    default=DEFAULT_MAX_BYTES,
    show_default=True,
    help="Largest payload a policy evaluates (JSON bytes); a stdio line or HTTP body may "
    "be 64 KiB more, for the envelope. Larger messages are refused with -32600 or -32602.",
)
@click.option(
    "--watch",
    is_flag=True,
    help="Reload the policy files when they change (SIGHUP reloads them too).",
)
@click.option("--allow-shrink", is_flag=True, help="Accept a reload that drops interceptors.")
@click.option("--verbose", "-v", is_flag=True, help="Trace every message to stderr.")
@click.option(
    "--principal-id",
    metavar="ID",
    help="stdio: the client's context.principal.id (default: the OS user).",
)
@click.option(
    "--principal-role",
    "principal_roles",
    metavar="ROLE",
    multiple=True,
    help="stdio: a role in context.principal.claims.roles (repeatable).",
)
@metrics_listen_option
@tracing_options
@flow_options
@auth_options
@rate_limit_options
def gateway(**flags: Any) -> None:
    """Put policies in the path of MCP traffic between a client and its servers."""
    _serve(*configure(**flags))


def configure(
    paths: tuple[str, ...],
    backends: tuple[str, ...],
    interceptor_servers: tuple[str, ...],
    config_path: str | None,
    check: bool,
    listen: str | None,
    auth_token_env: str | None,
    stateless: bool,
    max_sessions: int | None,
    max_sessions_per_client: int | None,
    handshake_timeout: float | None,
    side: str | None,
    block_style: str | None,
    expose_interceptors: bool,
    backend_timeout: float | None,
    on_backend_exit: str | None,
    backend_env: tuple[str, ...],
    pass_env: tuple[str, ...],
    decision_log: str | None,
    log_payloads: bool,
    decision_log_complete: bool,
    record: str | None,
    max_payload_bytes: int,
    watch: bool,
    allow_shrink: bool,
    verbose: bool,
    metrics_listen: str | None,
    otlp_endpoint: str | None,
    otel_service_name: str | None,
    flow_store: str | None,
    flow_key_env: str | None,
    flow_ttl: float,
    flow_max_entries: int,
    flow_max_sessions: int,
    flow_max_values: int,
    limit_max_keys: int,
    limit_timeout: float,
    principal_id: str | None,
    principal_roles: tuple[str, ...],
    **auth: Any,
) -> tuple[GatewayOptions, GatewayDecisionLog | None, TrafficRecorder | None]:
    """The gateway the command line asks for: its options, with the policies compiled,
    and its logs opened; what it cannot be exits with why (``fail``). Needs the
    command's click context (``gateway.make_context``); the tests build in-process
    gateways with it, the same ones ``policyc gateway`` serves."""
    options = _load_options(
        config_path,
        check,
        paths=paths,
        backends=backends,
        interceptors=interceptor_servers,
        side=side,
        block_style=block_style,
        expose_interceptors=expose_interceptors,
        backend_timeout=backend_timeout,
        on_backend_exit=on_backend_exit,
        backend_env=backend_env,
        pass_env=pass_env,
        stateless=stateless,
        decision_log=decision_log,
        record=record,
        log_payloads=log_payloads,
        verbose=verbose,
    )
    _front(options, listen, auth_token_env)
    _identity(options, auth, auth_token_env, principal_id, principal_roles)
    options.sessions = _session_limits(
        options.sessions, max_sessions, max_sessions_per_client, handshake_timeout
    )
    flow = _flow_flags(
        options,
        flow_store=flow_store,
        flow_key_env=flow_key_env,
        flow_ttl=flow_ttl,
        flow_max_entries=flow_max_entries,
        flow_max_sessions=flow_max_sessions,
    )
    _auth_token(options, auth_token_env)
    _configure_logging(options.verbose)
    flows = flow_runtime(
        **flow, flow_max_values=_flag_or(options.flow, "flow_max_values", flow_max_values)
    )
    counters = rate_limit_runtime(
        flow["flow_store"],
        flows,
        _flag_or(options.limits, "limit_max_keys", limit_max_keys),
        _flag_or(options.limits, "limit_timeout", limit_timeout),
    )
    _policies(
        options, (flows, counters), flow["flow_store"], max_payload_bytes, watch, allow_shrink
    )
    decisions, recorder = _open_logs(options, decision_log_complete)
    count_store_errors()
    start_metrics_listener(metrics_listen)
    start_tracing(otlp_endpoint, otel_service_name)
    return options, decisions, recorder


def _load_options(config_path: str | None, check: bool, **flags: Any) -> GatewayOptions:
    """The config file (or none) with the command line's flags over it; ``--check``
    validates the file and exits."""
    from ..gateway import ConfigError, load_config, options_from_flags

    if check and config_path is None:
        fail("--check needs --config FILE")
    try:
        if config_path is not None:
            options = load_config(Path(config_path))
            if check:
                click.echo(f"{config_path}: ok", err=True)
                sys.exit(ExitCode.SUCCESS)
        else:
            options = options_from_flags()
        options.merge_flags(**flags)
    except ConfigError as exc:
        click.echo(str(exc), err=True)
        sys.exit(ExitCode.PROBLEMS if check or config_path else ExitCode.USAGE)
    return options


def _front(options: GatewayOptions, listen: str | None, auth_token_env: str | None) -> None:
    """stdio or ``--http``, and the flags that need HTTP."""
    if not options.backends:
        fail("give at least one --backend NAME=COMMAND_OR_URL")
    if listen is not None:
        options.listen = parse_listen(listen)
    if options.listen is None and (auth_token_env or options.stateless):
        fail("--auth-token-env and --stateless need --http")


def _flow_flags(options: GatewayOptions, **given: Any) -> dict[str, Any]:
    """The ``--flow-*`` settings, flags over the config's ``[flow]``; ``--stateless``
    needs the shared key."""
    flow = {name: _flag_or(options.flow, name, value) for name, value in given.items()}
    if options.stateless and not flow["flow_key_env"]:
        fail(
            "--stateless needs --flow-key-env: its session ids are signed with that key, "
            "and every replica must check them with the same one"
        )
    return flow


def _auth_token(options: GatewayOptions, auth_token_env: str | None) -> None:
    from ..server import AuthConfigError, token_from_env

    if auth_token_env:
        try:
            options.auth_token = token_from_env(auth_token_env)
        except AuthConfigError as exc:
            fail(str(exc))


def _configure_logging(verbose: bool) -> None:
    """Logs to stderr; ``--verbose`` traces every message, else the libraries are quiet."""
    from ..server.log_text import configure_logging

    configure_logging(logging.DEBUG if verbose else logging.INFO, "policyc gateway")
    if not verbose:
        for noisy in ("mcp", "httpx", "httpx2", "uvicorn.access"):
            logging.getLogger(noisy).setLevel(logging.WARNING)


def _policies(
    options: GatewayOptions,
    state: tuple[FlowRuntime, RateLimitRuntime],
    flow_store: str | None,
    max_payload_bytes: int,
    watch: bool,
    allow_shrink: bool,
) -> None:
    """Compile the policy files (if any) into the gateway's provider, with their reloader;
    ``state`` is where flow rules and rate limits keep theirs."""
    flows, counters = state
    options.max_payload_bytes = max_payload_bytes
    limits = Limits(max_bytes=max_payload_bytes)
    policy_set = (
        compile_or_exit(
            tuple(str(p) for p in options.policies), limits, flows=flows, rate_limits=counters
        )
        if options.policies
        else None
    )
    refusal = _unshared_state(options, flow_store, policy_set) if policy_set else None
    if refusal is not None:
        fail(refusal)
    options.providers = [policy_set] if policy_set is not None else []
    if policy_set is not None:
        options.reload = _reload(
            options,
            (limits, flows, counters),
            flow_store,
            policy_set,
            watch=watch,
            allow_shrink=allow_shrink,
        )
    elif watch:
        fail("--watch needs policy files to watch")
    options.session_key = flows.fingerprinter


def _open_logs(
    options: GatewayOptions, complete: bool
) -> tuple[GatewayDecisionLog | None, TrafficRecorder | None]:
    """The decision log and the traffic record asked for (each or ``None``); SIGHUP
    reopens them (``options.reopen``)."""
    from ..gateway import GatewayDecisionLog
    from ..gateway.decision_log import TrafficRecorder
    from ..server.decision_log import DecisionLogError

    try:
        decisions = (
            GatewayDecisionLog.open(
                options.decision_log,
                include_payloads=options.log_payloads,
                complete=complete,
            )
            if options.decision_log
            else None
        )
        recorder = TrafficRecorder.open(options.record) if options.record else None
    except DecisionLogError as exc:
        fail(str(exc))

    def reopen() -> None:
        for opened in (decisions, recorder):
            if opened is not None:
                opened.reopen()

    options.reopen = reopen
    return decisions, recorder


def _serve(
    options: GatewayOptions,
    decisions: GatewayDecisionLog | None,
    recorder: TrafficRecorder | None,
) -> None:
    """Run the gateway until it stops; exits 0, or 1 with why on stderr."""
    from ..gateway import run_gateway
    from ..gateway.decision_log import observers

    log = observers(decisions, recorder)
    try:
        fatal = anyio.run(run_gateway, options, log)
    except KeyboardInterrupt:
        fatal = None
    except Exception as exc:  # set-up failures: a backend or interceptor server unreachable
        while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
            exc = exc.exceptions[0]  # type: ignore[assignment]
        click.echo(f"policyc gateway: {exc}", err=True)
        sys.exit(ExitCode.PROBLEMS)
    finally:
        for opened in (decisions, recorder):
            if opened is not None:
                opened.close()
    if fatal:
        click.echo(f"policyc gateway: stopped: {fatal}", err=True)
        sys.exit(ExitCode.PROBLEMS)
    sys.exit(ExitCode.SUCCESS)


def _identity(
    options: GatewayOptions,
    auth: dict[str, Any],
    auth_token_env: str | None,
    principal_id: str | None,
    principal_roles: tuple[str, ...],
) -> None:
    """OAuth over HTTP (flags over ``[auth]``); the configured local principal over stdio."""
    from ..server.oauth import local_principal

    options.oauth = oauth_settings(pop_auth_flags(auth), options.oauth)
    if options.oauth is not None:
        if options.listen is None:
            fail("--auth-issuer and [auth] need --http (over stdio, use --principal-id)")
        if auth_token_env or options.auth_token:
            fail("give --auth-token-env or OAuth (--auth-issuer, [auth]), not both")
        started_verifier(options.oauth)  # refuse to start if the issuer's keys cannot be had
    if options.listen is not None:
        if principal_id or principal_roles:
            fail("--principal-id and --principal-role are for stdio; over HTTP the token says")
        return
    if principal_id or principal_roles or options.principal is None:
        base = options.principal or local_principal()
        claims = dict(base.claims or {})
        if principal_roles:
            claims["roles"] = list(principal_roles)
        options.principal = base.model_copy(
            update={"id": principal_id or base.id, "claims": claims}
        )

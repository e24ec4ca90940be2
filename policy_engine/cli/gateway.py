"""`policyc gateway`: a transparent MCP proxy that runs the policy chain on every message.

stdio towards the client by default, streamable HTTP with `--http`; each
`--backend NAME=CMD_OR_URL` is a stdio command or an HTTP URL. `--config FILE`
holds the same settings in TOML; `--config FILE --check` validates it and exits.
Logs and `--verbose` tracing go to stderr, never stdout (the stdio wire).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import anyio
import click

from .exit_codes import ExitCode
from .flow_options import flow_options, flow_runtime
from .inputs import compile_or_exit, fail
from .metrics_options import metrics_listen_option, start_metrics_listener
from .serve import parse_listen


def _flag_or(config: dict[str, Any], name: str, flag: Any) -> Any:
    """A ``--flow-*`` flag given on the command line wins over the config's ``[flow]``."""
    source = click.get_current_context().get_parameter_source(name)
    given = source is not None and source is not click.core.ParameterSource.DEFAULT
    return flag if given or name not in config else config[name]


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
    "--on-backend-exit",
    type=click.Choice(["restart", "exit"]),
    default=None,
    help="What to do when a backend dies (default: restart).",
)
@click.option("--decision-log", help="One JSON line per chain run to FILE, or - for stderr.")
@click.option("--log-payloads", is_flag=True, help="Include passed payloads in the decision log.")
@click.option(
    "--record",
    metavar="FILE",
    help="Append every chain run's payload as received and its decision to FILE, for "
    "`policyc replay` (created owner-only: it holds raw payloads).",
)
@click.option("--verbose", "-v", is_flag=True, help="Trace every message to stderr.")
@metrics_listen_option
@flow_options
def gateway(
    paths: tuple[str, ...],
    backends: tuple[str, ...],
    interceptor_servers: tuple[str, ...],
    config_path: str | None,
    check: bool,
    listen: str | None,
    auth_token_env: str | None,
    stateless: bool,
    side: str | None,
    block_style: str | None,
    expose_interceptors: bool,
    backend_timeout: float | None,
    on_backend_exit: str | None,
    decision_log: str | None,
    log_payloads: bool,
    record: str | None,
    verbose: bool,
    metrics_listen: str | None,
    flow_store: str | None,
    flow_key_env: str | None,
    flow_ttl: float,
    flow_max_entries: int,
    flow_max_sessions: int,
) -> None:
    """Put policies in the path of MCP traffic between a client and its servers."""
    from ..gateway import ConfigError, GatewayDecisionLog, load_config, options_from_flags
    from ..server import AuthConfigError, token_from_env

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
        options.merge_flags(
            paths=paths,
            backends=backends,
            interceptors=interceptor_servers,
            side=side,
            block_style=block_style,
            expose_interceptors=expose_interceptors,
            backend_timeout=backend_timeout,
            on_backend_exit=on_backend_exit,
            stateless=stateless,
            decision_log=decision_log,
            record=record,
            log_payloads=log_payloads,
            verbose=verbose,
        )
    except ConfigError as exc:
        click.echo(str(exc), err=True)
        sys.exit(ExitCode.PROBLEMS if check or config_path else ExitCode.USAGE)
    if not options.backends:
        fail("give at least one --backend NAME=COMMAND_OR_URL")
    if listen is not None:
        options.listen = parse_listen(listen)
    if options.listen is None and (auth_token_env or options.stateless):
        fail("--auth-token-env and --stateless need --http")
    flow_store = _flag_or(options.flow, "flow_store", flow_store)
    flow_key_env = _flag_or(options.flow, "flow_key_env", flow_key_env)
    flow_ttl = _flag_or(options.flow, "flow_ttl", flow_ttl)
    flow_max_entries = _flag_or(options.flow, "flow_max_entries", flow_max_entries)
    flow_max_sessions = _flag_or(options.flow, "flow_max_sessions", flow_max_sessions)
    if options.stateless and not flow_key_env:
        fail(
            "--stateless needs --flow-key-env: its session ids are signed with that key, "
            "and every replica must check them with the same one"
        )
    if auth_token_env:
        try:
            options.auth_token = token_from_env(auth_token_env)
        except AuthConfigError as exc:
            fail(str(exc))
    logging.basicConfig(
        level=logging.DEBUG if options.verbose else logging.INFO,
        stream=sys.stderr,
        format="policyc gateway: %(message)s",
    )
    if not options.verbose:
        for noisy in ("mcp", "httpx", "httpx2", "uvicorn.access"):
            logging.getLogger(noisy).setLevel(logging.WARNING)
    flows = flow_runtime(flow_store, flow_key_env, flow_ttl, flow_max_entries, flow_max_sessions)
    policy_set = (
        compile_or_exit(tuple(str(p) for p in options.policies), flows=flows)
        if options.policies
        else None
    )
    if options.stateless and flow_store is None and policy_set and policy_set.has_flow_rules:
        fail(
            "--stateless with flow rules needs --flow-store: a replica would remember only "
            "what it saw, and a flow split across replicas would pass"
        )
    options.providers = [policy_set] if policy_set is not None else []
    options.session_key = flows.fingerprinter
    from ..gateway.decision_log import TrafficRecorder, observers
    from ..server.decision_log import DecisionLogError

    try:
        decisions = (
            GatewayDecisionLog.open(options.decision_log, include_payloads=options.log_payloads)
            if options.decision_log
            else None
        )
        recorder = TrafficRecorder.open(options.record) if options.record else None
    except DecisionLogError as exc:
        fail(str(exc))
    log = observers(decisions, recorder)
    start_metrics_listener(metrics_listen)
    from ..gateway import run_gateway

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

"""`policyc serve PATH...`: compiled policies as an MCP interceptor server.

stdio by default; `--http HOST:PORT` for streamable HTTP (127.0.0.1 unless a
host is named; another address needs auth or an explicit opt-in). `--watch`
recompiles on change and keeps the last good set when an edit does not
compile or would drop interceptors. Every resource a client controls is
bounded; the options below change the bounds (docs/server.md, "Limits and how
to change them").
"""

from __future__ import annotations

import logging
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import click

from . import serve_options
from .auth_options import auth_options, oauth_settings, pop_auth_flags, started_verifier
from .exit_codes import ExitCode
from .flow_options import flow_options, flow_runtime
from .inputs import compile_or_exit, fail
from .metrics_options import count_store_errors, metrics_listen_option, start_metrics_listener
from .options import limit_options, limits_from
from .rate_limit_options import rate_limit_options, rate_limit_runtime
from .tracing_options import start_tracing, tracing_options

if TYPE_CHECKING:
    from ..compiler import PolicySet
    from ..server import DecisionLog


def parse_listen(value: str) -> tuple[str, int]:
    """``HOST:PORT``, ``[IPV6]:PORT`` or ``PORT``; a usage error otherwise."""
    host, sep, port = value.rpartition(":")
    if not sep:
        host, port = "127.0.0.1", value
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        fail(f"--http wants HOST:PORT, [IPV6]:PORT or PORT, not `{value}`")
    if ":" in host and not (host.startswith("[") and host.endswith("]")):
        fail(f"--http: write an IPv6 address in brackets, as in [::1]:{port}")
    return host or "127.0.0.1", int(port)


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option(
    "--http", "listen", help="Serve streamable HTTP on HOST:PORT (or PORT) instead of stdio."
)
@click.option("--watch", is_flag=True, help="Recompile and swap the policy set when files change.")
@click.option("--auth-token-env", help="HTTP only: require this env var's value as a bearer token.")
@click.option(
    "--stateless",
    is_flag=True,
    help="HTTP only: no sessions, for scale-out behind a load balancer.",
)
@click.option("--decision-log", help="Write one JSON line per invoke to FILE, or - for stderr.")
@click.option(
    "--log-payloads",
    is_flag=True,
    help="Include result payloads (after mutation) in the decision log.",
)
@click.option(
    "--allowed-host", "allowed_hosts", multiple=True, help="Extra Host header values to accept."
)
@click.option(
    "--record",
    "record_path",
    metavar="FILE",
    help="Append every invoke's payload as received and its decision to FILE, for "
    "`policyc replay` (created owner-only: it holds raw payloads).",
)
@metrics_listen_option
@tracing_options
@limit_options
@serve_options.limit_options
@flow_options
@auth_options
@rate_limit_options
def serve(
    paths: tuple[str, ...],
    listen: str | None,
    watch: bool,
    auth_token_env: str | None,
    stateless: bool,
    decision_log: str | None,
    log_payloads: bool,
    allowed_hosts: tuple[str, ...],
    record_path: str | None,
    metrics_listen: str | None,
    otlp_endpoint: str | None,
    otel_service_name: str | None,
    max_payload_bytes: int,
    max_depth: int,
    **bounds: Any,
) -> None:
    """Serve policies as SEP-2624 interceptors (interceptors/list, interceptor/invoke)."""
    from ..compiler import compile_policies
    from ..server import AuthConfigError, ListenError, TransportLimits, token_from_env
    from ..server.limits import message_limit
    from ..server.run import ServerOptions, run_server

    limits = limits_from(max_payload_bytes, max_depth)
    oauth = oauth_settings(pop_auth_flags(bounds))
    # One flow state for the life of the server: a reload keeps what sessions remembered.
    flows = flow_runtime(
        flow_store := bounds.pop("flow_store"),
        bounds.pop("flow_key_env"),
        bounds.pop("flow_ttl"),
        bounds.pop("flow_max_entries"),
        bounds.pop("flow_max_sessions"),
        bounds.pop("flow_max_values"),
    )
    counters = rate_limit_runtime(
        flow_store, flows, bounds.pop("limit_max_keys"), bounds.pop("limit_timeout")
    )
    from ..server.log_text import configure_logging

    configure_logging(logging.INFO, "policyc")
    if listen is None and (
        auth_token_env
        or oauth
        or stateless
        or allowed_hosts
        or bounds["allow_unauthenticated_remote"]
    ):
        fail(
            "--auth-token-env, --auth-issuer, --stateless, --allowed-host and "
            "--allow-unauthenticated-remote need --http"
        )
    if oauth is not None and auth_token_env:
        fail("give --auth-token-env or --auth-issuer, not both")
    verifier = started_verifier(oauth) if oauth is not None else None
    token = None
    if auth_token_env:
        try:
            token = token_from_env(auth_token_env)
        except AuthConfigError as exc:
            fail(str(exc))
    address = parse_listen(listen) if listen is not None else None

    def load(watched: Sequence[Path]) -> PolicySet:
        return compile_policies(watched, limits, flows, counters)

    options = ServerOptions(
        # Compiled once, its errors reported the usual way; `--watch` recompiles on change.
        provider=compile_or_exit(paths, limits, flows=flows, rate_limits=counters),
        watch=[Path(p) for p in paths] if watch else (),
        load=load if watch else None,
        allow_shrink=bounds["allow_shrink"],
        listen=address,
        auth_token=token,
        verifier=verifier,
        allow_unauthenticated_remote=bounds["allow_unauthenticated_remote"],
        stateless=stateless,
        allowed_hosts=allowed_hosts,
        limits=TransportLimits(
            max_message_bytes=message_limit(max_payload_bytes),
            max_in_flight=bounds["max_in_flight"],
            header_timeout=bounds["header_timeout"],
            body_timeout=bounds["body_timeout"],
            idle_timeout=bounds["idle_timeout"],
            session_idle_timeout=bounds["session_idle_timeout"],
            max_sessions=bounds["max_sessions"],
            max_connections=bounds["max_connections"],
        ),
        ready=_announce(address[0]) if address is not None else None,
    )
    from ..observability import metrics

    metrics.policies_loaded()
    count_store_errors()
    start_metrics_listener(metrics_listen)
    start_tracing(otlp_endpoint, otel_service_name)
    with _logs(decision_log, log_payloads, record_path, bounds) as (log, recorder):
        options.decision_log, options.record = log, recorder
        try:
            anyio.run(run_server, options)
        except ListenError as exc:
            fail(str(exc))
        except KeyboardInterrupt:
            pass
    sys.exit(ExitCode.SUCCESS)


def _announce(host: str) -> Callable[[int], None]:
    def ready(bound: int) -> None:
        click.echo(f"policyc: serving on http://{host}:{bound}/mcp", err=True)

    return ready


@contextmanager
def _logs(
    decision_log: str | None, log_payloads: bool, record_path: str | None, bounds: dict[str, Any]
) -> Iterator[tuple[DecisionLog | None, DecisionLog | None]]:
    """The decision log (reopened on SIGHUP) and the traffic record, closed on the way out."""
    from ..compiler.log_redaction import redact_for_log
    from ..server import DecisionLog
    from ..server.decision_log import DecisionLogError, DecisionLogSettings
    from ..server.traffic_recorder import open_recorder

    log = recorder = None
    try:
        if decision_log:
            settings = DecisionLogSettings(
                include_payloads=log_payloads,
                redact_payload=redact_for_log,
                max_bytes=bounds["decision_log_max_bytes"] or None,
                backups=bounds["decision_log_backups"],
                queue_lines=bounds["decision_log_queue"],
                complete=bounds["decision_log_complete"],
            )
            try:
                log = DecisionLog(decision_log, settings)
            except DecisionLogError as exc:
                fail(str(exc))
            opened = log
            signal.signal(signal.SIGHUP, lambda _sig, _frame: opened.reopen())
        if record_path:
            try:
                recorder = open_recorder(record_path)
            except DecisionLogError as exc:
                fail(str(exc).replace("decision log", "traffic record"))
        yield log, recorder
    finally:
        if log is not None:
            log.close()
        if recorder is not None:
            recorder.close()

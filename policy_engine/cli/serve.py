"""`policyc serve PATH...`: compiled policies as an MCP interceptor server.

stdio by default; `--http HOST:PORT` for streamable HTTP (127.0.0.1 unless a
host is named). `--watch` recompiles on change and keeps the last good set
when an edit does not compile.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from pathlib import Path

import anyio
import click

from .exit_codes import ExitCode
from .inputs import compile_or_exit, fail
from .options import limit_options, limits_from


def parse_listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep:
        host, port = "127.0.0.1", value
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        fail(f"--http wants HOST:PORT or PORT, not `{value}`")
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
@limit_options
def serve(
    paths: tuple[str, ...],
    listen: str | None,
    watch: bool,
    auth_token_env: str | None,
    stateless: bool,
    decision_log: str | None,
    log_payloads: bool,
    allowed_hosts: tuple[str, ...],
    max_payload_bytes: int,
    max_depth: int,
) -> None:
    """Serve policies as SEP-2624 interceptors (interceptors/list, interceptor/invoke)."""
    from ..compiler import compile_policies
    from ..server import (
        AuthConfigError,
        DecisionLog,
        ProviderSource,
        Reloader,
        serve_http,
        serve_stdio,
        static_source,
        token_from_env,
    )
    from ..wire import InterceptorProvider

    limits = limits_from(max_payload_bytes, max_depth)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="policyc: %(message)s")
    if listen is None and (auth_token_env or stateless or allowed_hosts):
        fail("--auth-token-env, --stateless and --allowed-host need --http")
    token = None
    if auth_token_env:
        try:
            token = token_from_env(auth_token_env)
        except AuthConfigError as exc:
            fail(str(exc))
    log = DecisionLog.open(decision_log, include_payloads=log_payloads) if decision_log else None
    reloader: Reloader | None = None
    if watch:

        def load(watched: Sequence[Path]) -> InterceptorProvider:
            return compile_policies(watched, limits)

        compile_or_exit(paths, limits)  # report the first compile's errors the usual way
        reloader = Reloader([Path(p) for p in paths], load)
        source: ProviderSource = reloader.cell
    else:
        source = static_source(compile_or_exit(paths, limits))

    async def run() -> None:
        async with anyio.create_task_group() as group:
            if reloader is not None:
                group.start_soon(reloader.run)
            if listen is None:
                await serve_stdio(source, decision_log=log)
            else:
                host, port = parse_listen(listen)

                def ready(bound: int) -> None:
                    click.echo(f"policyc: serving on http://{host}:{bound}/mcp", err=True)

                await serve_http(
                    source,
                    host=host,
                    port=port,
                    auth_token=token,
                    stateless=stateless,
                    decision_log=log,
                    ready=ready,
                    allowed_hosts=allowed_hosts,
                )
            group.cancel_scope.cancel()

    try:
        anyio.run(run)
    except KeyboardInterrupt:
        pass
    finally:
        if log is not None:
            log.close()
    sys.exit(ExitCode.SUCCESS)

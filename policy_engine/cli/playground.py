"""`policyc playground [PATH...]`: a local page to edit policies and try payloads."""

from __future__ import annotations

import socket
import sys

import click

from ..language.diagnostics import SourceCache, render_text
from ..language.pipeline import expand_paths
from ..language.sources import decode_sources, read_sources
from .exit_codes import ExitCode
from .inputs import fail
from .source_options import source_limit_options, source_limits


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(exists=True))
@click.option("--port", default=8765, show_default=True, help="Port; 0 picks a free one.")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to bind. Anything but loopback exposes the page to the network.",
)
@source_limit_options
def playground(paths: tuple[str, ...], port: int, host: str) -> None:
    """Serve the playground on 127.0.0.1 (preloaded with PATHs, else an example)."""
    import uvicorn

    from ..authoring.playground.app import LOOPBACK_NAMES, create_app
    from .explain import render_explain

    files = expand_paths(paths)
    if paths and not files:
        fail("no .policy files found")
    limits = source_limits()
    sources, problems = decode_sources(read_sources(files, limits), limits)
    if problems:
        for problem in problems:
            click.echo(render_text(problem, SourceCache()), err=True)
        fail(f"{len(problems)} policy file(s) cannot be read", ExitCode.PROBLEMS)
    extra = frozenset() if host in LOOPBACK_NAMES else frozenset({host})
    if extra:
        click.echo(f"policyc: warning: serving on {host}, not loopback only", err=True)
    app = create_app(sources, explain=render_explain, extra_hosts=extra, limits=limits)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror}")
    sock.listen(128)  # queue connections from the moment the URL is printed
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    click.echo(f"policyc playground on http://{shown}:{bound}/ (Ctrl-C to stop)")
    sys.stdout.flush()
    config = uvicorn.Config(app, log_level="warning", lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])

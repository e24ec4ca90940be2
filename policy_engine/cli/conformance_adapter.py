"""`policyc conformance-adapter`: serve one fixture's interceptors, bound to policyc's behaviours.

The reference adapter of the conformance contract (docs/conformance.md):
`policyc conformance` starts it once per fixture with the fixture's
interceptors file in `$MCP_CONFORMANCE_INTERCEPTORS`. It imports the server
and the compiler only, so each start stays cheap.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from pathlib import Path

import anyio
import click

from .exit_codes import ExitCode
from .inputs import fail
from .serve import parse_listen


@click.command("conformance-adapter")
@click.option(
    "--interceptors",
    "interceptors_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The fixture's interceptors file (default: the path in $MCP_CONFORMANCE_INTERCEPTORS).",
)
@click.option("--http", "listen", help="Serve streamable HTTP on HOST:PORT instead of stdio.")
def conformance_adapter(interceptors_file: Path | None, listen: str | None) -> None:
    """Serve one fixture's interceptors, bound to policyc's behaviours (the reference adapter)."""
    from ..conformance.adapter import AdapterError, Unsupported, bind, read_interceptors
    from ..conformance.contract import INTERCEPTORS_ENV, UNSUPPORTED_EXIT, UNSUPPORTED_MARKER
    from ..server import serve_http, serve_stdio, static_source

    if interceptors_file is None:
        from_env = os.environ.get(INTERCEPTORS_ENV)
        if not from_env:
            fail(f"no interceptors file: pass --interceptors or set ${INTERCEPTORS_ENV}")
        interceptors_file = Path(from_env)
    try:
        provider = bind(read_interceptors(interceptors_file))
    except Unsupported as exc:
        click.echo(f"{UNSUPPORTED_MARKER} {exc}", err=True)
        sys.exit(UNSUPPORTED_EXIT)
    except AdapterError as exc:
        fail(str(exc))
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="policyc: %(message)s")
    source = static_source(provider)

    async def run() -> None:
        if listen is None:
            await serve_stdio(source)
        else:
            host, port = parse_listen(listen)
            await serve_http(source, host=host, port=port)

    with contextlib.suppress(KeyboardInterrupt):
        anyio.run(run)
    sys.exit(ExitCode.SUCCESS)

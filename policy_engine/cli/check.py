"""`policyc check PATH...`: parse, resolve, check and lint; print diagnostics."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..language.check_tools import SnapshotError, ToolSnapshot, load_snapshot
from ..language.hidden import visible
from ..language.pipeline import check_paths, expand_paths
from .diagnostic_output import format_option, print_diagnostics
from .exit_codes import ExitCode
from .source_options import source_limit_options, source_limits


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@format_option
@click.option("--strict", is_flag=True, help="Warnings fail the check too.")
@click.option("--max-diagnostics", default=100, show_default=True, help="Cap on reported problems.")
@click.option(
    "--tools",
    "tools_path",
    type=click.Path(exists=True, dir_okay=False),
    help="A saved tools/list result: check tool names and arguments against it.",
)
@click.option(
    "--server",
    "server",
    metavar="CMD_OR_URL",
    help="Fetch this server's tools/list (a stdio command or an http(s) URL) to check against.",
)
@source_limit_options
def check(
    paths: tuple[str, ...],
    output_format: str,
    strict: bool,
    max_diagnostics: int,
    tools_path: str | None,
    server: str | None,
) -> None:
    """Check policy files (directories are searched for *.policy)."""
    files = expand_paths(paths)
    if not files:
        click.echo("policyc: no .policy files found", err=True)
        sys.exit(ExitCode.USAGE)
    tools = None
    if tools_path is not None:
        try:
            tools = load_snapshot(Path(tools_path).read_text(encoding="utf-8"))
        except (SnapshotError, UnicodeDecodeError) as exc:
            click.echo(visible(f"policyc: --tools {tools_path}: {exc}"), err=True)
            sys.exit(ExitCode.USAGE)
    if server is not None:
        tools = _fetched(server)
    result = check_paths(files, cap=max_diagnostics, limits=source_limits(), tools=tools)
    print_diagnostics(result.diagnostics, output_format, result.sources)
    if output_format == "text":
        if result.truncated:
            click.echo(f"... and {result.truncated} more (raise --max-diagnostics to see them)")
        errors, warnings = result.error_count, result.warning_count
        summary = f"{len(files)} file(s) checked: {errors} error(s), {warnings} warning(s)"
        click.echo(summary, err=True)
    failed = result.error_count > 0 or (strict and result.warning_count > 0)
    sys.exit(ExitCode.PROBLEMS if failed else ExitCode.SUCCESS)


def _fetched(server: str) -> ToolSnapshot:
    """The live server's tools; a server that cannot be reached is a usage error, said plainly."""
    import anyio

    from .tools_snapshot import fetch_tools

    try:
        listed = anyio.run(fetch_tools, server)
        return load_snapshot(json.dumps(listed))
    except Exception as exc:  # any failure to reach or read the server; never a traceback
        # The reason may be the server's own words: no raw control characters from it.
        reason = f"policyc: --server {server}: could not list its tools ({exc})"
        click.echo(visible(reason), err=True)
        sys.exit(ExitCode.USAGE)

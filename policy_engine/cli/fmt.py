"""`policyc fmt PATH...`: rewrite files in the canonical layout, or `--check` them."""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

import click

from ..language.diagnostics import SourceCache, render_text
from ..language.formatter import format_source
from ..language.pipeline import expand_paths
from ..language.sources import decode_sources, read_sources
from .exit_codes import ExitCode
from .source_options import source_limit_options, source_limits


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option(
    "--check", "check_only", is_flag=True, help="Write nothing; exit 1 if a file would change."
)
@click.option(
    "--diff", "show_diff", is_flag=True, help="Print a diff of the changes; write nothing."
)
@source_limit_options
def fmt(paths: tuple[str, ...], check_only: bool, show_diff: bool) -> None:
    """Format policy files (idempotent; comments are kept)."""
    changed: list[Path] = []
    broken = False
    limits = source_limits()
    for path in expand_paths(paths):
        texts, problems = decode_sources(read_sources([path], limits), limits)
        for d in problems:
            click.echo(render_text(d, SourceCache()), err=True)
        if problems:
            broken = True
            continue
        original = texts[str(path)]
        outcome = format_source(original, str(path), limits)
        if outcome.text is None:
            sources = SourceCache()
            sources.add(str(path), original)
            for d in outcome.diagnostics:
                click.echo(render_text(d, sources), err=True)
            broken = True
            continue
        if outcome.text == original:
            continue
        changed.append(path)
        if check_only or show_diff:
            diff = difflib.unified_diff(
                original.splitlines(keepends=True),
                outcome.text.splitlines(keepends=True),
                f"{path} (original)",
                f"{path} (formatted)",
            )
            click.echo("".join(diff), nl=False)
        if not (check_only or show_diff):
            # A preview (`--check`, `--diff`) never touches the files it shows.
            path.write_text(outcome.text, encoding="utf-8")
    verb = "would reformat" if check_only or show_diff else "reformatted"
    for path in changed:
        click.echo(f"{verb} {path}", err=True)
    if broken:
        sys.exit(ExitCode.PROBLEMS)
    sys.exit(ExitCode.PROBLEMS if check_only and changed else ExitCode.SUCCESS)

"""The `--format text|json|github|sarif` output of diagnostics, for `check` and `analyze`."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from ..language.codes import CODES
from ..language.diagnostics import Diagnostic, SourceCache, render_github, render_sarif, render_text

F = TypeVar("F", bound=Callable[..., Any])
FORMATS = ("text", "json", "github", "sarif")


def format_option(command: F) -> F:
    return click.option(
        "--format",
        "output_format",
        type=click.Choice(FORMATS),
        default="text",
        show_default=True,
    )(command)


def print_diagnostics(
    diagnostics: Sequence[Diagnostic],
    output_format: str,
    sources: SourceCache,
    extra_json: dict[str, Any] | None = None,
) -> None:
    """Each diagnostic in the chosen form; ``extra_json`` joins the JSON object."""
    if output_format == "json":
        data = {"diagnostics": [d.to_json() for d in diagnostics], **(extra_json or {})}
        click.echo(json.dumps(data, indent=2))
    elif output_format == "github":
        for d in diagnostics:
            click.echo(render_github(d))
    elif output_format == "sarif":
        click.echo(render_sarif(diagnostics, CODES))
    else:
        for d in diagnostics:
            click.echo(render_text(d, sources))
            click.echo()

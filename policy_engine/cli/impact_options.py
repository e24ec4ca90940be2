"""Options and output shared by `policyc replay`, `policyc diff` and `policyc analyze`."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from ..impact.report import FORMATS, ImpactReport, render
from ..language.model import PolicySetModel
from .exit_codes import ExitCode

F = TypeVar("F", bound=Callable[..., Any])


seed_option = click.option("--seed", type=int, default=0, show_default=True, help="Generator seed.")


def report_options(command: F) -> F:
    command = click.option(
        "--show-values",
        is_flag=True,
        help="Print payload values in examples (masked by default: traffic is sensitive).",
    )(command)
    command = click.option(
        "--examples",
        type=click.IntRange(0, 100),
        default=3,
        show_default=True,
        help="Examples kept per group of changes.",
    )(command)
    return click.option(
        "--format",
        "output_format",
        type=click.Choice(FORMATS),
        default="text",
        show_default=True,
        help="markdown is written to be pasted as a pull-request comment.",
    )(command)


def finish(
    report: ImpactReport, output_format: str, show_values: bool, *models: PolicySetModel
) -> None:
    """Print the report and exit 0 when nothing changed, 1 when something did."""
    from ..impact.literals import collect_literals

    keep: frozenset[str] | None = None
    if not show_values:
        literals = None
        for model in models:
            literals = collect_literals(model, literals)
        keep = frozenset(literals.strings) if literals is not None else frozenset()
    click.echo(render(report, output_format, keep))  # type: ignore[arg-type]
    sys.exit(ExitCode.PROBLEMS if report.changed else ExitCode.SUCCESS)

"""`policyc replay CANDIDATE... --traffic FILE [--baseline PATH...]`.

Runs recorded traffic through a candidate policy set and reports every
message whose outcome changed. Exit 0: nothing changed; 1: something did;
2: an error (unreadable traffic, a set that does not compile).
"""

from __future__ import annotations

import anyio
import click

from .exit_codes import ExitCode
from .impact_options import finish, report_options
from .inputs import compile_or_exit, fail


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option(
    "--traffic",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="A file written by `--record` (one JSON line per message).",
)
@click.option(
    "--baseline",
    "baseline_paths",
    multiple=True,
    type=click.Path(exists=True),
    help="The current policy set; without it the recorded decisions are the baseline.",
)
@report_options
def replay(
    paths: tuple[str, ...],
    traffic: str,
    baseline_paths: tuple[str, ...],
    output_format: str,
    examples: int,
    show_values: bool,
) -> None:
    """Replay recorded traffic through a candidate policy set."""
    from ..impact.replay import replay as run_replay
    from ..impact.traffic import TrafficFileError, iter_traffic

    candidate = compile_or_exit(paths, on_error=ExitCode.USAGE)
    baseline = compile_or_exit(baseline_paths, on_error=ExitCode.USAGE) if baseline_paths else None
    try:
        # Streamed: a bad line ends the run with its error, before any report is printed.
        records = iter_traffic(traffic)
        report = anyio.run(run_replay, candidate, records, baseline, examples)
    except TrafficFileError as exc:
        fail(str(exc))
    models = [candidate.model] + ([baseline.model] if baseline is not None else [])
    finish(report, output_format, show_values, *models)

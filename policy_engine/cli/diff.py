"""`policyc diff OLD_PATH NEW_PATH`: what a policy change changes.

Structural changes (interceptors, descriptors with risk notes, rules matched
by code) and behavioural ones (test blocks, `--traffic`, generated payloads),
each with a shrunk example. Exit 0: the two sets behave the same on
everything tried; 1: something changed; 2: an error.
"""

from __future__ import annotations

import anyio
import click

from .exit_codes import ExitCode
from .flow_options import echo_synthetic_note, tool_flows
from .impact_options import finish, report_options, seed_option
from .inputs import compile_or_exit, fail


@click.command()
@click.argument("old_path", type=click.Path(exists=True))
@click.argument("new_path", type=click.Path(exists=True))
@click.option(
    "--traffic", type=click.Path(exists=True, dir_okay=False), help="Recorded traffic to add."
)
@click.option(
    "--budget",
    type=click.IntRange(0),
    default=2000,
    show_default=True,
    help="Generated payloads per hooked event and phase.",
)
@click.option(
    "--time-limit",
    type=click.FloatRange(0.1),
    default=30.0,
    show_default=True,
    help="Seconds for the behavioural comparison; what is not tried is reported.",
)
@seed_option
@report_options
def diff(
    old_path: str,
    new_path: str,
    traffic: str | None,
    budget: int,
    time_limit: float,
    seed: int,
    output_format: str,
    examples: int,
    show_values: bool,
) -> None:
    """Compare two policy sets, in structure and in behaviour."""
    from ..impact.diff import DiffBudget, diff_sets
    from ..impact.traffic import TrafficFileError, read_traffic

    old_flows, new_flows = tool_flows("diff-old"), tool_flows("diff-new")
    old = compile_or_exit((old_path,), on_error=ExitCode.USAGE, flows=old_flows)
    new = compile_or_exit((new_path,), on_error=ExitCode.USAGE, flows=new_flows)
    extra = []
    if traffic is not None:
        try:
            extra = [message for message, _ in read_traffic(traffic)]
        except TrafficFileError as exc:
            fail(str(exc))
    settings = DiffBudget(budget, time_limit, seed, examples)
    report = anyio.run(diff_sets, old, new, extra, settings)
    echo_synthetic_note(old_flows)
    echo_synthetic_note(new_flows)
    finish(report, output_format, show_values, old.model, new.model)

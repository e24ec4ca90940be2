"""`policyc analyze PATH...`: rules that can never fire, are shadowed, or never matter.

The exact findings are the analysis diagnostics `check` also reports
(W301, W304, W315, W320-W322, and W323 when the analyses stop at
their budget, `--max-analysis-steps`), alone, in every `check` format. With `--sample N`
it also reports rules that never fired on N generated messages per hook,
labelled as sampled: evidence, never a proof.
"""

from __future__ import annotations

import sys

import anyio
import click

from ..language.diagnostics import Code, render_text
from ..language.pipeline import check_paths, expand_paths
from .diagnostic_output import format_option, print_diagnostics
from .exit_codes import ExitCode
from .impact_options import seed_option
from .inputs import compile_or_exit, fail
from .source_options import source_limit_options, source_limits

ANALYSIS_CODES = frozenset(
    {Code.W301, Code.W304, Code.W315, Code.W320, Code.W321, Code.W322, Code.W323}
)


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@format_option
@click.option(
    "--sample",
    type=click.IntRange(0),
    default=0,
    show_default=True,
    help="Also run N generated messages per hook and list rules that never fired.",
)
@seed_option
@source_limit_options
def analyze(paths: tuple[str, ...], output_format: str, sample: int, seed: int) -> None:
    """Find rules that can never fire, are shadowed, or are always overwritten."""
    files = expand_paths(paths)
    if not files:
        fail("no .policy files found")
    result = check_paths(files, limits=source_limits())
    if result.error_count:
        for d in result.errors:
            click.echo(render_text(d, result.sources), err=True)
        fail(f"{result.error_count} error(s) in the policy set", ExitCode.PROBLEMS)
    found = [d for d in result.diagnostics if d.code in ANALYSIS_CODES]
    unfired = []
    if sample:
        from ..compiler.bounds import Limits
        from ..impact.sampling import unfired_rules

        policy_set = compile_or_exit(paths, Limits(source=source_limits()))
        unfired = anyio.run(unfired_rules, policy_set, sample, 60.0, seed)
    sampled = [
        {"interceptor": u.interceptor, "rule": u.rule, "source": u.source, "samples": u.samples}
        for u in unfired
    ]
    print_diagnostics(found, output_format, result.sources, {"sampled": sampled})
    if output_format == "text":
        for u in unfired:
            click.echo(
                f"{u.source}: sampled: rule `{u.rule}` of `{u.interceptor}` never fired on "
                f"{u.samples} generated message(s) (evidence, not proof)"
            )
        click.echo(f"{len(files)} file(s) analyzed: {len(found)} finding(s)", err=True)
    sys.exit(ExitCode.PROBLEMS if found else ExitCode.SUCCESS)

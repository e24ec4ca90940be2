"""`policyc test PATH...`: run test blocks, pytest-style, with rule coverage."""

from __future__ import annotations

import sys

import anyio
import click

from ..compiler.bounds import DEFAULT_MAX_BYTES, DEFAULT_MAX_DEPTH
from ..testing import TestReport, run_tests
from .exit_codes import ExitCode
from .flow_options import tool_flows
from .inputs import compile_or_exit
from .options import limits_from
from .source_options import source_limit_options


def _render(report: TestReport, verbose: bool) -> list[str]:
    lines: list[str] = []
    for case in report.cases:
        status = "PASSED" if case.passed else "FAILED"
        if verbose or not case.passed:
            lines.append(f"{case.id} {status}")
    for case in report.failed:
        lines.append("")
        lines.append(f"___ {case.name} ({case.file}:{case.line}) ___")
        lines.extend(case.failures)
    return lines


def _render_coverage(report: TestReport) -> list[str]:
    lines = ["", "rule coverage (rules a test made fire, or expected not to):"]
    for file in sorted(report.coverage.rules):
        hit, total = report.coverage.file_ratio(file)
        missed = report.coverage.missed_lines(file)
        percent = 100.0 if total == 0 else 100.0 * hit / total
        tail = f"  missed lines: {', '.join(map(str, missed))}" if missed else ""
        lines.append(f"  {file}: {hit}/{total} ({percent:.0f}%){tail}")
    lines.append(f"  total: {report.coverage.percent:.1f}%")
    return lines


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--coverage", is_flag=True, help="Report which rules fired, per file.")
@click.option("--threshold", type=float, help="Fail when rule coverage is below this percent.")
@click.option("-k", "name_filter", help="Run only tests whose name contains this text.")
@click.option("-v", "--verbose", is_flag=True, help="List every test, not only failures.")
@source_limit_options
def test(
    paths: tuple[str, ...],
    coverage: bool,
    threshold: float | None,
    name_filter: str | None,
    verbose: bool,
) -> None:
    """Run the `test` blocks of a policy set through the in-process chain."""
    flows = tool_flows("test")
    limits = limits_from(DEFAULT_MAX_BYTES, DEFAULT_MAX_DEPTH)
    policy_set = compile_or_exit(paths, limits, flows=flows)
    report = anyio.run(run_tests, policy_set, name_filter)
    for line in _render(report, verbose):
        click.echo(line)
    note = flows.synthetic_note()
    if note is not None:
        click.echo(note)
    if coverage or threshold is not None:
        for line in _render_coverage(report):
            click.echo(line)
    passed = len(report.cases) - len(report.failed)
    click.echo(f"\n{passed} passed, {len(report.failed)} failed in {report.duration_s:.2f}s")
    if not report.cases:
        click.echo("policyc: no test blocks found", err=True)
        sys.exit(ExitCode.PROBLEMS)
    if report.failed:
        sys.exit(ExitCode.PROBLEMS)
    if threshold is not None and report.coverage.percent < threshold:
        click.echo(
            f"policyc: rule coverage {report.coverage.percent:.1f}% is below {threshold:g}%",
            err=True,
        )
        sys.exit(ExitCode.PROBLEMS)
    sys.exit(ExitCode.SUCCESS)

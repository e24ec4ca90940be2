"""`policyc conformance`: the SEP-2624 fixtures against an interceptor server.

Without `--server` the suite runs against policyc itself: the reference
adapter (`policyc conformance-adapter`), started once per fixture, serves the
fixture's interceptors the way `policyc serve` serves policies.
docs/conformance.md has the contract that another SDK's adapter follows.
"""

from __future__ import annotations

import json
import shlex
import sys

import anyio
import click

from ..conformance.report import Report
from ..conformance.runner import ServerTarget, run_suite
from ..conformance.suite import SuiteError, load_suite
from ..conformance.wg_adapter import WgAdapterError, WgTarget, run_wg_suite
from .exit_codes import ExitCode
from .inputs import fail

# The default server: this interpreter running our own adapter, once per fixture.
_ADAPTER = (sys.executable, "-m", "policy_engine.cli.main", "conformance-adapter")


@click.command()
@click.option(
    "--server",
    "server",
    metavar="CMD",
    help="Command that starts the server under test (split like a shell line); "
    "default: policyc's own adapter.",
)
@click.option(
    "--url",
    metavar="URL",
    help="With --server: reach the started server over streamable HTTP at URL "
    "(`{port}` picks a free port) instead of its stdio.",
)
@click.option(
    "--http",
    "over_http",
    is_flag=True,
    help="Without --server: run policyc's adapter over streamable HTTP instead of stdio.",
)
@click.option(
    "--wg-adapter",
    "wg_adapter",
    metavar="SPEC",
    help="Run an adapter that follows the working group's ADAPTER.md instead of a server: "
    "python:MODULE:ATTR or node:PATH[#EXPORT].",
)
@click.option(
    "--fixture",
    "fixtures",
    multiple=True,
    metavar="ID",
    help="Run only fixtures whose id starts with ID (repeatable), e.g. protocol/chain-.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="Report format.",
)
@click.option(
    "--threshold",
    type=click.FloatRange(0, 100),
    default=100.0,
    show_default=True,
    help="Exit 1 when fewer than this percentage of fixtures pass.",
)
@click.option(
    "--timeout",
    "timeout_s",
    type=click.FloatRange(0.1),
    default=30.0,
    show_default=True,
    help="Seconds one fixture may take, server start included.",
)
@click.option(
    "--jobs",
    type=click.IntRange(1, 16),
    default=2,
    show_default=True,
    help="Fixtures run at the same time (each starts its own server).",
)
def conformance(
    server: str | None,
    url: str | None,
    over_http: bool,
    wg_adapter: str | None,
    fixtures: tuple[str, ...],
    output_format: str,
    threshold: float,
    timeout_s: float,
    jobs: int,
) -> None:
    """Run the SEP-2624 conformance fixtures against an interceptor server."""
    wg = _wg_target(wg_adapter, server, url, over_http)
    target = _target(server, url, over_http)
    try:
        suite = load_suite()
    except SuiteError as exc:
        fail(str(exc))
    chosen = suite.select(fixtures)
    if not chosen:
        fail(f"no fixture id starts with {', '.join(f'`{f}`' for f in fixtures)}")

    async def run() -> Report:
        if wg is not None:
            return await run_wg_suite(suite, wg, chosen, timeout_s=timeout_s, jobs=jobs)
        return await run_suite(suite, target, chosen, timeout_s=timeout_s, jobs=jobs)

    try:
        report = anyio.run(run)
    except WgAdapterError as exc:
        fail(str(exc))
    if output_format == "json":
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        click.echo(report.to_text(), nl=False)
    sys.exit(ExitCode.SUCCESS if report.meets(threshold) else ExitCode.PROBLEMS)


def _wg_target(
    spec: str | None, server: str | None, url: str | None, over_http: bool
) -> WgTarget | None:
    if spec is None:
        return None
    if server is not None or url is not None or over_http:
        fail("--wg-adapter runs an adapter, not a server: leave out --server, --url and --http")
    try:
        return WgTarget.parse(spec)
    except WgAdapterError as exc:
        fail(str(exc))


def _target(server: str | None, url: str | None, over_http: bool) -> ServerTarget:
    if server is None:
        if url is not None:
            fail("--url needs --server (use --http to run policyc's adapter over HTTP)")
        if over_http:
            return ServerTarget(
                (*_ADAPTER, "--http", "127.0.0.1:{port}"),
                url="http://127.0.0.1:{port}/mcp",
                label="policyc conformance-adapter (streamable HTTP)",
            )
        return ServerTarget(_ADAPTER, label="policyc conformance-adapter (stdio)")
    if over_http:
        fail("--http runs policyc's own adapter; with --server, give --url")
    try:
        command = tuple(shlex.split(server))
    except ValueError as exc:
        fail(f"--server is not a valid command line: {exc}")
    if not command:
        fail("--server is empty")
    return ServerTarget(command, url=url)

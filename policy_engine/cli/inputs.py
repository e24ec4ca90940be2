"""Reading the JSON and policy inputs every command shares, with usage errors
instead of tracebacks."""

from __future__ import annotations

import re
import sys
from typing import Any, NoReturn

import click

from ..compiler import CompileError, Limits, PolicySet, compile_policies
from ..compiler.flows import FlowRuntime
from ..compiler.rate_limits import RateLimitRuntime
from ..language.pipeline import expand_paths
from ..wire.json_text import JSONTextError, loads
from .exit_codes import ExitCode


def fail(message: str, code: ExitCode = ExitCode.USAGE) -> NoReturn:
    click.echo(f"policyc: {message}", err=True)
    sys.exit(code)


def load_json(text: str, what: str) -> Any:
    """Strict JSON (``wire.json_text``): ``NaN`` and ``Infinity`` are refused, as on the wire."""
    try:
        return loads(text)
    except JSONTextError as exc:
        fail(f"{what} is not valid JSON: {exc}")


def read_json_source(source: str | None, what: str) -> Any:
    """`-` reads stdin, anything else is a file; None means an empty object."""
    if source is None:
        return {}
    if source == "-":
        return load_json(sys.stdin.read(), what)
    try:
        with open(source, encoding="utf-8") as handle:
            return load_json(handle.read(), what)
    except OSError as exc:
        fail(f"cannot read {what} `{source}`: {exc.strerror}")


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def printable(text: str) -> str:
    """``text`` with each lone surrogate written as a JSON escape (``\\ud800``).

    JSON allows a lone surrogate (``"\\ud800"``) and payloads may carry one, but
    no terminal encoding can print it. In JSON output the escape is the same
    value; in a trace it is the readable form.
    """
    return _LONE_SURROGATE.sub(lambda found: f"\\u{ord(found[0]):04x}", text)


def compile_or_exit(
    paths: tuple[str, ...],
    limits: Limits | None = None,
    on_error: ExitCode = ExitCode.PROBLEMS,
    flows: FlowRuntime | None = None,
    rate_limits: RateLimitRuntime | None = None,
) -> PolicySet:
    """The compiled set, or the diagnostics and an exit: `replay` and `diff` exit 2,
    because for them a broken set is an error, not a finding."""
    if not expand_paths(paths):
        fail("no .policy files found")
    try:
        return compile_policies(paths, limits, flows, rate_limits)
    except CompileError as exc:
        click.echo(exc.diagnostics_text, err=True)
        fail(exc.summary, on_error)

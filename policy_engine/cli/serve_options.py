"""The options of `policyc serve` that bound what clients control, with safe defaults.

Defaults come from ``server.limits.TransportLimits`` and
``server.decision_log.DecisionLogSettings``, so the help text, the docs and
the server agree on one number each.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

_SECONDS = click.FloatRange(min=0.001)
_COUNT = click.IntRange(min=1)


def _transport_defaults() -> Any:
    from ..server.limits import TransportLimits

    return TransportLimits()


def _log_defaults() -> Any:
    from ..server.decision_log import DecisionLogSettings

    return DecisionLogSettings()


def limit_options(command: F) -> F:
    limits = _transport_defaults()
    log = _log_defaults()
    options = [
        click.option(
            "--max-in-flight",
            type=_COUNT,
            default=limits.max_in_flight,
            show_default=True,
            help="stdio: requests read and not yet answered before reading pauses.",
        ),
        click.option(
            "--header-timeout",
            type=_SECONDS,
            default=limits.header_timeout,
            show_default=True,
            help="HTTP: seconds a connection has to send complete request headers.",
        ),
        click.option(
            "--body-timeout",
            type=_SECONDS,
            default=limits.body_timeout,
            show_default=True,
            help="HTTP: seconds a request has to send its whole body.",
        ),
        click.option(
            "--idle-timeout",
            type=_SECONDS,
            default=limits.idle_timeout,
            show_default=True,
            help="HTTP: seconds a keep-alive connection may sit idle.",
        ),
        click.option(
            "--session-idle-timeout",
            type=_SECONDS,
            default=limits.session_idle_timeout,
            show_default=True,
            help="HTTP: seconds a session may go without a request before it ends.",
        ),
        click.option(
            "--max-sessions",
            type=_COUNT,
            default=limits.max_sessions,
            show_default=True,
            help="HTTP: open sessions; past it the session idle longest is ended.",
        ),
        click.option(
            "--max-connections",
            type=_COUNT,
            default=None,
            help="HTTP: open connections [default: the descriptor limit minus 64, at most 4096].",
        ),
        click.option(
            "--allow-unauthenticated-remote",
            is_flag=True,
            help="HTTP: serve a non-loopback address without --auth-token-env.",
        ),
        click.option(
            "--allow-shrink",
            is_flag=True,
            help="--watch: accept a reload that drops interceptors.",
        ),
        click.option(
            "--decision-log-max-bytes",
            type=click.IntRange(min=0),
            default=log.max_bytes,
            show_default=True,
            help="Rotate the decision log file at this size; 0 never rotates (use SIGHUP).",
        ),
        click.option(
            "--decision-log-backups",
            type=click.IntRange(min=0),
            default=log.backups,
            show_default=True,
            help="Rotated decision log files kept (FILE.1, FILE.2, ...).",
        ),
        click.option(
            "--decision-log-queue",
            type=_COUNT,
            default=log.queue_lines,
            show_default=True,
            help="Decision log lines held for the writer; past it lines are dropped and counted.",
        ),
        click.option(
            "--decision-log-complete",
            is_flag=True,
            help="Fail an invoke whose decision cannot be logged instead of dropping the line.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command

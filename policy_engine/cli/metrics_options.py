"""``--metrics-listen HOST:PORT``: /metrics, /healthz and /readyz on a listener of their own.

For the stdio transports, which have no HTTP port to serve them on (with
``--http`` they are served on that port already).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from .inputs import fail

F = TypeVar("F", bound=Callable[..., Any])

metrics_listen_option: Callable[[F], F] = click.option(
    "--metrics-listen",
    metavar="HOST:PORT",
    help="Serve /metrics, /healthz and /readyz on HOST:PORT (unauthenticated: "
    "keep it on a private address), e.g. for a stdio server.",
)


def _flow_store_failed(kind: str, operation: str) -> None:
    from ..observability import metrics

    metrics.store_error("flow", kind, operation)


def _limit_store_failed(kind: str, operation: str) -> None:
    from ..observability import metrics

    metrics.store_error("limit", kind, operation)


def count_store_errors() -> None:
    """Count flow-store and limit-store failures in ``policyc_store_errors_total`` (the
    store layers import nothing of policyc's, so the command hands them the counter)."""
    from ..flow import on_error as on_flow_error
    from ..limits import on_error as on_limit_error

    on_flow_error(_flow_store_failed)
    on_limit_error(_limit_store_failed)


def start_metrics_listener(value: str | None) -> None:
    """Start the listener, or exit with a usage error naming the address."""
    if value is None:
        return
    from ..observability import metrics
    from .serve import parse_listen

    host, port = parse_listen(value)
    try:
        metrics.start_listener(host.strip("[]"), port)
    except OSError as exc:
        fail(f"--metrics-listen {value}: {exc.strerror or exc}")

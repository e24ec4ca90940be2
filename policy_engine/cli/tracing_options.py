"""``--otlp-endpoint URL`` and ``--otel-service-name NAME``: OpenTelemetry traces over OTLP/HTTP.

Without the flag, the standard ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) turns tracing on just the same; with
neither, nothing of OpenTelemetry is imported. The SDK comes with the ``otel``
extra: asking for traces without it is a usage error that says what to install.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

import click

from .inputs import fail

F = TypeVar("F", bound=Callable[..., Any])


def tracing_options(command: F) -> F:
    """The two tracing flags, for ``serve`` and ``gateway``."""
    command = click.option(
        "--otel-service-name",
        metavar="NAME",
        help="service.name of the exported spans (default: $OTEL_SERVICE_NAME, else policyc).",
    )(command)
    return click.option(
        "--otlp-endpoint",
        metavar="URL",
        help="Export OpenTelemetry traces over OTLP/HTTP to this collector (base URL; spans "
        "go to URL/v1/traces). Default: $OTEL_EXPORTER_OTLP_ENDPOINT. Needs policyc[otel].",
    )(command)


def start_tracing(endpoint: str | None, service_name: str | None) -> None:
    """Turn tracing on when asked (flag or environment), or exit with a usage error."""
    from ..observability import tracing

    if endpoint is not None:
        parts = urlsplit(endpoint)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            fail(f"--otlp-endpoint {endpoint}: not an http:// or https:// URL")
    if not tracing.wanted(endpoint):
        return
    try:
        tracing.configure(endpoint, service_name)
    except tracing.TracingUnavailable as exc:
        where = "--otlp-endpoint" if endpoint else f"${tracing.ENDPOINT_ENV}"
        fail(f"{where}: {exc}")

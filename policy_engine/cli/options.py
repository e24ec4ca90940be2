"""Options more than one command takes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from ..compiler import Limits
from ..compiler.bounds import DEFAULT_MAX_BYTES, DEFAULT_MAX_DEPTH
from .source_options import source_limit_options, source_limits

F = TypeVar("F", bound=Callable[..., Any])


def limit_options(command: F) -> F:
    """`--max-payload-bytes` and `--max-depth`: the bounds on evaluation work; and the
    source limits (:func:`source_limit_options`)."""
    command = source_limit_options(command)
    command = click.option(
        "--max-depth",
        type=click.IntRange(1),
        default=DEFAULT_MAX_DEPTH,
        show_default=True,
        help="Refuse payloads nested deeper than this.",
    )(command)
    return click.option(
        "--max-payload-bytes",
        type=click.IntRange(1),
        default=DEFAULT_MAX_BYTES,
        show_default=True,
        help="Refuse payloads larger than this (JSON bytes).",
    )(command)


def limits_from(max_payload_bytes: int, max_depth: int) -> Limits:
    return Limits(max_bytes=max_payload_bytes, max_depth=max_depth, source=source_limits())

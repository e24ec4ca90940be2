"""Options more than one command takes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from ..compiler import Limits
from ..compiler.bounds import DEFAULT_MAX_BYTES, DEFAULT_MAX_DEPTH
from .source_options import source_limit_options, source_limits

F = TypeVar("F", bound=Callable[..., Any])


_ABSOLUTE_PATHS = "policyc.absolute_paths"


def _remember_absolute(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    ctx.meta[_ABSOLUTE_PATHS] = value
    return value


def limit_options(command: F) -> F:
    """`--max-payload-bytes` and `--max-depth`: the bounds on evaluation work; the
    source limits (:func:`source_limit_options`); and `--absolute-paths`."""
    command = source_limit_options(command)
    command = click.option(
        "--absolute-paths",
        is_flag=True,
        expose_value=False,
        callback=_remember_absolute,
        help="Name policy files in results by absolute path (default: relative to the "
        "policy folder given).",
    )(command)
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
    ctx = click.get_current_context(silent=True)
    absolute = bool(ctx.meta.get(_ABSOLUTE_PATHS)) if ctx is not None else False
    return Limits(
        max_bytes=max_payload_bytes,
        max_depth=max_depth,
        source=source_limits(),
        absolute_paths=absolute,
    )

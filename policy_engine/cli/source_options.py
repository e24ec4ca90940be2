"""The source-limit options of every command that reads policies.

Apart from `options.py` so `policyc check` imports neither pydantic nor the SDK.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from ..language.limits import (
    DEFAULT_MAX_ANALYSIS_STEPS,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_NESTING,
    DEFAULT_MAX_RULES,
    MAX_NESTING_CEILING,
    SourceLimits,
)

F = TypeVar("F", bound=Callable[..., Any])
_SOURCE_LIMITS = "policyc.source_limits"


def _remember(ctx: click.Context, param: click.Parameter, value: int) -> int:
    """Source limits go to the context, not to each command's signature."""
    ctx.meta.setdefault(_SOURCE_LIMITS, {})[param.name] = value
    return value


def source_limit_options(command: F) -> F:
    """`--max-policy-bytes`, `--max-rules`, `--max-nesting`, `--max-analysis-steps`:
    what checking policies may cost."""
    for name, field_name, default, ceiling, text in (
        (
            "--max-analysis-steps",
            "max_analysis_steps",
            DEFAULT_MAX_ANALYSIS_STEPS,
            None,
            "Stop the rule analyses (W301-W322) after this many comparisons (W323).",
        ),
        (
            "--max-nesting",
            "max_nesting",
            DEFAULT_MAX_NESTING,
            MAX_NESTING_CEILING,
            "Refuse conditions and values in policies nested deeper than this (E008).",
        ),
        (
            "--max-rules",
            "max_rules",
            DEFAULT_MAX_RULES,
            None,
            "Refuse policy sets with more rules than this (E010).",
        ),
        (
            "--max-policy-bytes",
            "max_file_bytes",
            DEFAULT_MAX_FILE_BYTES,
            None,
            "Refuse policy files larger than this (E009).",
        ),
    ):
        command = click.option(
            name,
            field_name,
            type=click.IntRange(1, ceiling),
            default=default,
            show_default=True,
            expose_value=False,
            callback=_remember,
            help=text,
        )(command)
    return command


def source_limits() -> SourceLimits:
    """The limits the current command was given (defaults outside a command)."""
    ctx = click.get_current_context(silent=True)
    given = ctx.meta.get(_SOURCE_LIMITS, {}) if ctx is not None else {}
    return SourceLimits(**given)

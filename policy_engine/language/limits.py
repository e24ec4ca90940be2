"""Bounds on what one policy set may cost to check: file size, rule count, nesting.

Policy files come from whoever can write to the policy folder, and a hostile or
generated file must get a diagnostic, not a RecursionError, gigabytes of memory
or a check that never ends. Each limit is an option of every command that reads
policies (`--max-policy-bytes`, `--max-rules`, `--max-nesting`); docs/language.md
("Limits") gives the defaults and what the worst input under them costs.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_MAX_FILE_BYTES = 1024 * 1024
DEFAULT_MAX_RULES = 10_000
DEFAULT_MAX_NESTING = 100
# Glob questions and rule comparisons the analyses (W301-W322) may ask of one
# set; past it they stop with W323 instead of taking minutes (analysis.py).
DEFAULT_MAX_ANALYSIS_STEPS = 300_000
# Conditions, operands and literals are lowered and evaluated recursively, so
# nesting cannot be raised past what Python's stack holds with room to spare.
MAX_NESTING_CEILING = 150


@dataclass(frozen=True)
class SourceLimits:
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    max_rules: int = DEFAULT_MAX_RULES
    max_nesting: int = DEFAULT_MAX_NESTING
    max_analysis_steps: int = DEFAULT_MAX_ANALYSIS_STEPS

    def __post_init__(self) -> None:
        if not 1 <= self.max_nesting <= MAX_NESTING_CEILING:
            raise ValueError(f"max_nesting must be between 1 and {MAX_NESTING_CEILING}")
        if self.max_file_bytes < 1 or self.max_rules < 1 or self.max_analysis_steps < 1:
            raise ValueError("max_file_bytes, max_rules and max_analysis_steps must be positive")

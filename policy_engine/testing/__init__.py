"""Runs the `test` blocks of a policy set through the in-process SEP chain."""

from .local_chain import TracingProvider, run_local_chain
from .runner import CaseResult, Coverage, TestReport, run_tests

__all__ = [
    "CaseResult",
    "Coverage",
    "TestReport",
    "TracingProvider",
    "run_local_chain",
    "run_tests",
]

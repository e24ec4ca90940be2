"""Lowering checked policies into SEP validators and mutators, and running them."""

from .bounds import Limits
from .policy_set import CompileError, PolicySet, compile_policies, compile_sources
from .trace import RuleEvent, RuleRef, Trace

__all__ = [
    "CompileError",
    "Limits",
    "PolicySet",
    "RuleEvent",
    "RuleRef",
    "Trace",
    "compile_policies",
    "compile_sources",
]

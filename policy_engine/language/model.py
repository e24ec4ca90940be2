"""What the checker hands the compiler: a policy set with every name resolved.

The descriptor of each interceptor is built in the language layer (the
pipeline's "describe" stage, describe.py), so `policyc check` can report
descriptor problems without the compiler.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from ..wire.constants import Mode, Phase
from . import ast
from .diagnostics import Span

if TYPE_CHECKING:
    from ..wire.descriptor import InterceptorDescriptor

NO_DEFAULT: Any = object()
Hooks = list[tuple[tuple[str, ...], Phase]]


@dataclass(frozen=True)
class ResolvedPattern:
    name: str
    source: str
    flags: str
    check: str | None
    builtin: bool
    span: Span | None = None


@dataclass(frozen=True)
class ResolvedParam:
    name: str
    type: ast.TypeRef
    default: Any
    span: Span

    @property
    def required(self) -> bool:
        return self.default is NO_DEFAULT


@dataclass
class ResolvedInterceptor:
    """An interceptor with its names resolved. The descriptor's content is kept
    as wire JSON and turned into the pydantic model only when asked for, so
    `policyc check` never builds a model class."""

    node: ast.Interceptor
    file: str
    params: dict[str, ResolvedParam]
    rules: tuple[ast.Rule, ...]
    priorities: dict[Phase, int]
    hooks: Hooks
    mode: Mode = "active"
    fail_open: bool = False
    description: str | None = None
    version: str | None = None
    compat: dict[str, str] | None = None
    # Filled by the pipeline's later stages: one core rule per rule ("desugar"),
    # the SEP descriptor as wire JSON ("describe").
    core_rules: tuple[ast.CoreRule, ...] = ()
    # The priorities the block set, per phase (`priorities` fills in 0 for the rest).
    declared_priorities: dict[Phase, int] = field(default_factory=dict)
    descriptor_fields: dict[str, Any] = field(default_factory=dict)
    servers: dict[str, str] = field(default_factory=dict)
    """Tool name -> the server it belongs to (``server NAME tools [...]``), for flow rules."""

    @cached_property
    def descriptor(self) -> InterceptorDescriptor:
        from ..wire.descriptor import InterceptorDescriptor

        return InterceptorDescriptor.model_validate(self.descriptor_fields)

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def is_validator(self) -> bool:
        return self.node.kind == "validator"

    def hooked(self) -> list[tuple[str, Phase]]:
        """Every (event, phase) pair this interceptor declares, in declaration order."""
        return [(e, phase) for events, phase in self.hooks for e in events]


@dataclass
class PolicySetModel:
    files: list[ast.PolicyFile]
    interceptors: list[ResolvedInterceptor] = field(default_factory=list)
    patterns: dict[str, ResolvedPattern] = field(default_factory=dict)
    tests: list[tuple[str, ast.TestBlock]] = field(default_factory=list)

    def interceptor(self, name: str) -> ResolvedInterceptor | None:
        for item in self.interceptors:
            if item.name == name:
                return item
        return None

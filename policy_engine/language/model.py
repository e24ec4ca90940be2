"""What the checker hands the compiler: a policy set with every name resolved.

The descriptor of each interceptor is built here, in the language layer, so
`policyc check` can report descriptor problems without the compiler.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..wire import InterceptorDescriptor, Phase
from . import ast
from .diagnostics import Span

NO_DEFAULT: Any = object()


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
    node: ast.Interceptor
    file: str
    descriptor: InterceptorDescriptor
    params: dict[str, ResolvedParam]
    rules: tuple[ast.Rule, ...]
    priorities: dict[Phase, int]

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def is_validator(self) -> bool:
        return self.node.kind == "validator"

    def hooked(self) -> list[tuple[str, Phase]]:
        """Every (event, phase) pair this interceptor declares, in declaration order."""
        return [(e, h.phase) for h in self.descriptor.hooks for e in h.events]


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

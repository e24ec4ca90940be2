"""The front end as named stages, OPA-style: parse, resolve, check, lint, desugar, describe.

Each stage records diagnostics and its own duration, and tests can stop the
pipeline after any stage. The last two hand the compiler what it lowers:
core rules only (desugar.py) and each interceptor's SEP descriptor
(describe.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from . import ast
from .acknowledge import apply_acknowledgements
from .check_events import check_events, declared_events
from .check_flow import check_flows
from .check_hidden import check_hidden
from .check_paths import check_interceptor_paths
from .check_regex import check_regexes
from .check_tools import ToolSnapshot, check_against_tools
from .check_types import check_rule_shapes, check_tests
from .describe import describe
from .desugar import desugar
from .diagnostics import DEFAULT_CAP, Diagnostic, SourceCache, sort_and_cap
from .limits import SourceLimits
from .lints import lint
from .model import PolicySetModel
from .parser import parse_source
from .resolve import resolve
from .sources import WIDE_BOMS, SourceInput, decode_sources, read_sources

Stage = Literal["parse", "resolve", "check", "lint", "desugar", "describe"]
STAGES: tuple[Stage, ...] = ("parse", "resolve", "check", "lint", "desugar", "describe")
POLICY_SUFFIX = ".policy"


@dataclass
class CheckResult:
    model: PolicySetModel | None
    diagnostics: list[Diagnostic]
    sources: SourceCache
    timings: dict[str, float] = field(default_factory=dict)
    truncated: int = 0
    error_count: int = 0
    warning_count: int = 0

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.is_error]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if not d.is_error]

    @property
    def ok(self) -> bool:
        return self.error_count == 0 and not self.errors


PolicyPaths = str | Path | Iterable[str | Path]
"""One policy file or directory, or several."""


def path_list(paths: PolicyPaths) -> list[Path]:
    """``paths`` as a list: one str or Path is one path, never its characters.

    A str is itself an iterable (of one-character "paths", the first of them
    often `/`); anything but a str or Path in the list is refused at once.
    """
    if isinstance(paths, str | Path):
        return [Path(paths)]
    if isinstance(paths, bytes | bytearray):
        raise TypeError("policy paths are a str or a Path (or a list of them), not bytes")
    listed: list[Path] = []
    for path in paths:
        if not isinstance(path, str | Path):
            raise TypeError(f"a policy path is a str or a Path, not {type(path).__name__}")
        listed.append(Path(path))
    return listed


def expand_paths(paths: PolicyPaths) -> list[Path]:
    """Files as given, directories as every `.policy` file below them, sorted, no repeats."""
    found: dict[Path, None] = {}
    for path in path_list(paths):
        if path.is_dir():
            for file in sorted(path.rglob(f"*{POLICY_SUFFIX}")):
                found.setdefault(file, None)
        else:
            found.setdefault(path, None)
    return list(found)


def check_sources(
    given: Mapping[str, SourceInput],
    *,
    until: Stage = "describe",
    cap: int = DEFAULT_CAP,
    limits: SourceLimits | None = None,
    tools: ToolSnapshot | None = None,
) -> CheckResult:
    """Check files given as text, bytes (decoded as UTF-8 here) or the error reading them;
    with ``tools`` (a tools/list snapshot) rules are also checked against the tools
    that exist (check_tools.py)."""
    limits = limits or SourceLimits()
    sources, diagnostics = decode_sources(given, limits)
    cache = SourceCache()
    for name, text in sources.items():
        cache.add(name, text)
    for name, raw in given.items():
        # Quote the line where UTF-8 decoding failed; UTF-16/32 text would quote as noise.
        if (
            isinstance(raw, bytes)
            and name not in sources
            and len(raw) <= limits.max_file_bytes
            and not raw.startswith(WIDE_BOMS)
        ):
            cache.add(name, raw.decode("utf-8", "replace"))
    timings: dict[str, float] = {}

    def run(stage: str, action: Callable[[], None]) -> None:
        start = time.perf_counter()
        action()
        timings[stage] = time.perf_counter() - start

    files: list[ast.PolicyFile] = []

    def parse() -> None:
        rules = 0
        for name, text in sources.items():
            outcome = parse_source(text, name, limits, rules_before=rules)
            diagnostics.extend(outcome.diagnostics)
            if not any(d.is_error for d in outcome.diagnostics):
                # A file that does not parse reports its syntax errors alone.
                diagnostics.extend(check_hidden(text, name))
            if outcome.file is not None:
                files.append(outcome.file)
                rules += outcome.rules
            if rules > limits.max_rules or outcome.rules_exceeded:
                break  # the set is refused; parsing more files would only cost time

    model_box: list[PolicySetModel] = []

    def do_resolve() -> None:
        model, found = resolve(files)
        model_box.append(model)
        diagnostics.extend(found)

    def check() -> None:
        model = model_box[0]
        declared = declared_events(model.files)
        diagnostics.extend(check_regexes(model.files))
        for policy in model.files:
            for item in policy.items:
                if isinstance(item, ast.Interceptor):
                    diagnostics.extend(check_events(item, declared))
        for interceptor in model.interceptors:
            diagnostics.extend(check_rule_shapes(interceptor))
            diagnostics.extend(check_interceptor_paths(interceptor))
        names = {i.name for i in model.interceptors}
        codes = frozenset(
            code for i in model.interceptors for r in i.rules if (code := getattr(r, "code", None))
        )
        diagnostics.extend(check_tests(model.files, names, declared, codes))
        diagnostics.extend(check_flows(model))
        if tools is not None:
            diagnostics.extend(check_against_tools(model, tools))

    def do_lint() -> None:
        diagnostics.extend(lint(model_box[0], limits.max_analysis_steps))
        diagnostics[:] = apply_acknowledgements(model_box[0].files, diagnostics)

    actions: dict[Stage, Callable[[], None]] = {
        "parse": parse,
        "resolve": do_resolve,
        "check": check,
        "lint": do_lint,
        "desugar": lambda: desugar(model_box[0]),
        "describe": lambda: describe(model_box[0]),
    }
    # Every stage runs even after another found errors (a parse error in one
    # file or an unknown name still lets everything else be checked), so one
    # typo never hides the other problems. Lowering, in the compiler, is the
    # stage that refuses to run on a set with errors.
    for stage in STAGES:
        run(stage, actions[stage])
        if stage == until:
            break
    shown, cut = sort_and_cap(diagnostics, cap)
    model = model_box[0] if model_box else None
    unique = set(diagnostics)
    errors = sum(1 for d in unique if d.is_error)
    return CheckResult(model, shown, cache, timings, cut, errors, len(unique) - errors)


def check_paths(
    paths: PolicyPaths,
    *,
    until: Stage = "describe",
    cap: int = DEFAULT_CAP,
    limits: SourceLimits | None = None,
    tools: ToolSnapshot | None = None,
) -> CheckResult:
    limits = limits or SourceLimits()
    return check_sources(
        read_sources(expand_paths(paths), limits),
        until=until,
        cap=cap,
        limits=limits,
        tools=tools,
    )

"""Stage 6, lowering: a checked policy set becomes invocable interceptors.

`PolicySet` is an `InterceptorProvider`: the server serves it and the chain
runs it in-process, both through exactly the `interceptor/invoke` semantics.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from ..flow import MemoryFlowStore
from ..language import ast
from ..language.diagnostics import Diagnostic, SourceCache, render_text
from ..language.model import PolicySetModel, ResolvedInterceptor
from ..language.pipeline import (
    CheckResult,
    PolicyPaths,
    check_paths,
    check_sources,
    expand_paths,
    path_list,
)
from ..language.sources import SourceInput
from ..limits import MemoryLimitStore
from ..wire import (
    HookIndex,
    InterceptorDescriptor,
    InvocationContext,
    InvokeParams,
    MutationResult,
    Phase,
    ProviderTraits,
    RunState,
    ValidationResult,
)
from ..wire.errors import (
    InterceptorError,
    PolicycError,
    execution_failed,
    not_hooked,
    timed_out,
    unknown_interceptor,
)
from .bounds import Limits, check_finite, measure_bounds
from .conditions import CompileEnv, EvalContext
from .config import resolve_config
from .field_groups import group_fields
from .flows import CompiledFlow, FlowRuntime, FlowScope, compile_flow, label_matchers
from .jsonpath import PayloadTooDeep
from .match_groups import build_match_groups
from .mutators import CompiledMutation, RuleGroup, compile_mutation, run_mutator
from .nesting import Encoding
from .payload_probe import PayloadProbe, ProbeRegexes
from .rate_limits import CompiledLimit, LimitScope, RateLimitRuntime, compile_limit
from .rewrite_groups import group_rewrites
from .rule_codes import content_code
from .trace import RuleRef, Trace
from .validators import CompiledCheck, compile_check, run_validator

_T = TypeVar("_T")

# Payloads larger than this (JSON bytes) are evaluated in a worker thread.
THREAD_THRESHOLD_BYTES = 256 * 1024


class CompileError(PolicycError):
    """The policy set has errors; ``diagnostics`` says which, ``sources`` quotes them.

    Its text is the count and then every diagnostic rendered as `policyc check`
    prints it, so an uncaught one in a traceback or a log says what to fix.
    """

    def __init__(self, result: CheckResult) -> None:
        self.result = result
        self.diagnostics: list[Diagnostic] = result.errors
        self.sources: SourceCache = result.sources
        super().__init__(self.summary)

    @property
    def summary(self) -> str:
        return f"{len(self.diagnostics)} error(s) in the policy set"

    @property
    def diagnostics_text(self) -> str:
        return "\n".join(render_text(d, self.sources) for d in self.diagnostics)

    def __str__(self) -> str:
        return f"{self.summary}\n{self.diagnostics_text}" if self.diagnostics else self.summary


def rule_ref(
    interceptor: str,
    rule: ast.Rule,
    file_names: Mapping[str, str] | None = None,
    taken: dict[str, int] | None = None,
) -> RuleRef:
    code = getattr(rule, "code", None) or content_code(interceptor, rule, taken)
    shown = (file_names or {}).get(rule.span.file)
    return RuleRef(code, rule.span, ast.RULE_KINDS.get(type(rule), "rule"), shown)


def file_names(paths: PolicyPaths, absolute: bool = False) -> dict[str, str]:
    """How results name each policy file: relative to the folder it was found in
    (a file given by itself: its name), or its absolute path when asked.

    Results travel to clients and logs; the server's directory layout is not
    theirs to see unless the operator says so.
    """
    names: dict[str, str] = {}
    for root in path_list(paths):
        for file in expand_paths([root]):
            if absolute:
                shown = os.path.abspath(file)
            elif root.is_dir():
                shown = file.relative_to(root).as_posix()
            else:
                shown = file.name
            names.setdefault(str(file), shown)
    return names


@dataclass
class CompiledInterceptor:
    resolved: ResolvedInterceptor
    checks: list[CompiledCheck] = field(default_factory=list)
    mutations: list[CompiledMutation] = field(default_factory=list)
    flows: list[CompiledFlow] = field(default_factory=list)
    flow_scope: FlowScope | None = None
    limits: list[CompiledLimit] = field(default_factory=list)
    limit_scope: LimitScope | None = None
    # The mutations as run, traced or not: `matching` and `$..name` rules grouped.
    plan: list[CompiledMutation | RuleGroup] = field(default_factory=list)
    # Whether any rule reads the payload's probe (payload_probe.py).
    consults_probe: bool = False

    @property
    def name(self) -> str:
        return self.resolved.name

    @cached_property
    def default_config(self) -> dict[str, Any]:
        """The params an invoke without `config` evaluates with, resolved once (rules
        only read them); a required param makes it refuse as `resolve_config` does."""
        return resolve_config(self.name, self.resolved.params, None)

    @cached_property
    def _hooks(self) -> HookIndex:
        return HookIndex((hook.events, hook.phase) for hook in self.descriptor.hooks)

    def hooks(self, event: str, phase: Phase) -> bool:
        """`InterceptorDescriptor.hooks_event` for one phase, from a set (`HookIndex`)."""
        return self._hooks.fires(event, phase)

    @property
    def descriptor(self) -> InterceptorDescriptor:
        return self.resolved.descriptor

    def rule_refs(self) -> list[RuleRef]:
        return (
            [c.ref for c in self.checks]
            + [m.ref for m in self.mutations]
            + [f.ref for f in self.flows]
            + [limit.ref for limit in self.limits]
        )


def compile_interceptor(
    resolved: ResolvedInterceptor,
    env: CompileEnv,
    names: Mapping[str, str] | None = None,
    optimize: bool = True,
) -> CompiledInterceptor:
    """Lower the core rules; the rule as written names each in traces and coverage.

    ``optimize=False`` lowers the reference plan: each rule alone, no shared
    pattern scans, no regex probe of the payload. It answers exactly as the optimised plan
    does (property tests compare the two) and exists to be compared against.
    """
    if len(resolved.core_rules) != len(resolved.rules) or not resolved.descriptor_fields:
        raise ValueError(f"`{resolved.name}` has not been through the desugar and describe stages")
    if optimize:
        groups = build_match_groups(resolved.core_rules, env.patterns, env.path)
        env = CompileEnv(env.patterns, env.paths, groups, env.probes)
    else:
        env = CompileEnv(env.patterns, env.paths)
    compiled = CompiledInterceptor(resolved)
    taken: dict[str, int] = {}
    for rule, core in zip(resolved.rules, resolved.core_rules, strict=True):
        ref = rule_ref(resolved.name, rule, names, taken)
        if isinstance(core, ast.FLOW_RULES):
            compiled.flows.append(compile_flow(core, ref, env))
        elif isinstance(core, ast.RateLimit):
            compiled.limits.append(compile_limit(core, ref, env))
        elif isinstance(core, ast.CheckRule):
            compiled.checks.append(compile_check(core, ref, env))
        else:
            compiled.mutations.append(compile_mutation(core, ref, env))
    mutations = compiled.mutations
    compiled.plan = group_fields(list(group_rewrites(mutations))) if optimize else list(mutations)
    compiled.consults_probe = env.consults_probe
    return compiled


class PolicySet:
    """Compiled interceptors, invocable by name, in the order they were written.

    A policy set keeps no state about the payloads it is given: what one
    invoke measured is handed on only to the later invokes of the same chain
    run (`wire.run.RunState`), so a caller may change a payload in place
    between two calls and is always judged on what it holds now.
    """

    def __init__(
        self,
        model: PolicySetModel,
        limits: Limits | None = None,
        file_names: Mapping[str, str] | None = None,
        flows: FlowRuntime | None = None,
        optimize: bool = True,
        rate_limits: RateLimitRuntime | None = None,
    ) -> None:
        self.model = model
        self.limits = limits or Limits()
        # Session state for flow rules: in this process unless a shared store is given.
        self.flows = flows or FlowRuntime()
        # Counters for `limit rate`/`limit total`: likewise, in the store the host chose.
        self.rate_limits = rate_limits or RateLimitRuntime(fingerprinter=self.flows.fingerprinter)
        self._probes = ProbeRegexes()
        env = CompileEnv(model.patterns, {}, probes=self._probes)
        self._interceptors: dict[str, CompiledInterceptor] = {}
        for resolved in model.interceptors:
            self._interceptors[resolved.name] = compile_interceptor(
                resolved, env, file_names, optimize
            )
        self._probes.seal()
        # Labels are the set's: any validator's `remember` feeds any `flow` rule.
        labels = label_matchers(
            [flow for compiled in self._interceptors.values() for flow in compiled.flows]
        )
        for compiled in self._interceptors.values():
            if compiled.flows:
                compiled.flow_scope = FlowScope(
                    compiled.name, compiled.flows, compiled.resolved.servers, labels
                )
            if compiled.limits:
                compiled.limit_scope = LimitScope(compiled.name, compiled.limits)

    @property
    def has_rate_limits(self) -> bool:
        """Whether any validator counts requests (hosts check where the counters live)."""
        return any(compiled.limits for compiled in self._interceptors.values())

    @property
    def has_flow_rules(self) -> bool:
        """Whether any validator keeps session flow state (hosts check where it lives)."""
        return any(compiled.flows for compiled in self._interceptors.values())

    # -- InterceptorProvider -------------------------------------------------

    def descriptors(self) -> list[InterceptorDescriptor]:
        return [i.descriptor for i in self._interceptors.values()]

    @property
    def traits(self) -> ProviderTraits:
        """Mutators copy on write and validators only read (tests/compiler prove
        both); `invoke` answers the SEP's timeout error itself; evaluation is in
        process unless flow rules keep their state in a store over the network.

        Made on each read (a chain entry reads it once): kept, its bound
        `invoke_fields` would tie the set to itself in a reference cycle."""
        in_process = (
            isinstance(self.flows.store, MemoryFlowStore)
            or all(i.flow_scope is None for i in self._interceptors.values())
        ) and (isinstance(self.rate_limits.store, MemoryLimitStore) or not self.has_rate_limits)
        return ProviderTraits(
            never_modifies_payload=True,
            evaluates_in_process=in_process,
            honours_timeout_ms=True,
            invoke_fields=self.invoke_fields,
        )

    async def invoke(self, params: InvokeParams) -> ValidationResult | MutationResult:
        """`interceptor/invoke` semantics.

        Evaluation is synchronous. A large payload is evaluated in a worker
        thread so the event loop keeps serving other requests and a
        `timeoutMs` deadline is answered on time (the abandoned evaluation
        still ends, bounded by the payload limits). A small one runs inline,
        where a thread hop would cost more than the work; if it still overran
        its `timeoutMs`, the answer is the SEP's timeout error, not a late result.
        """
        return await self.invoke_fields(
            params.name,
            params.event,
            params.phase,
            params.payload,
            params.config,
            params.timeout_ms,
            params.context,
        )

    async def invoke_fields(
        self,
        name: str,
        event: str,
        phase: Phase,
        payload: Any,
        config: dict[str, Any] | None,
        timeout_ms: int | None,
        context: InvocationContext | None,
        run: RunState | None = None,
        *,
        trace: Trace | None = None,
    ) -> ValidationResult | MutationResult:
        """`invoke` on the fields of `InvokeParams`, already validated by the caller
        (the chain: building the model again cost a few microseconds an invoke),
        sharing what it measures with the other invokes of ``run``; ``trace``
        observes the evaluation (`policyc test`, `eval --explain`)."""
        started = time.perf_counter()
        memo = run.slot(self, _RunMemo) if run is not None else _RunMemo()  # `_memo`, inline
        wire = memo.context_wire(context) if context is not None else None
        interceptor, ctx, size = self._prepare(
            name, event, phase, payload, config, wire, memo, context_is_wire=True
        )
        if size > THREAD_THRESHOLD_BYTES:
            result = await _within(
                timeout_ms,
                started,
                (name, phase),
                lambda: anyio.to_thread.run_sync(
                    self._evaluate, interceptor, ctx, trace, abandon_on_cancel=True
                ),
            )
        else:
            result = self._evaluate(interceptor, ctx, trace)
        scope = interceptor.flow_scope
        if scope is not None and isinstance(validated := result, ValidationResult):
            result = await _within(
                timeout_ms,
                started,
                (name, phase),
                lambda: self.flows.apply(scope, ctx, validated, trace),
            )
        limits = interceptor.limit_scope
        if limits is not None and isinstance(counted := result, ValidationResult):
            result = await _within(
                timeout_ms,
                started,
                (name, phase),
                lambda: self.rate_limits.apply(limits, ctx, counted, trace),
            )
        if isinstance(result, MutationResult):  # what `_bound_output` reads, tested inline
            self._bound_output(result, ctx, size, memo)
        took = result.duration_ms
        if timeout_ms is not None and took is not None and took > timeout_ms:
            raise timed_out(name, timeout_ms, phase)
        return result

    def _memo(self, run: RunState | None) -> _RunMemo:
        """This set's memo in ``run``; a fresh one, forgotten after the call, outside a run."""
        return run.slot(self, _RunMemo) if run is not None else _RunMemo()

    # -- library API ---------------------------------------------------------

    @property
    def interceptors(self) -> Mapping[str, CompiledInterceptor]:
        return self._interceptors

    def invoke_sync(
        self,
        name: str,
        event: str,
        phase: Phase,
        payload: Any,
        config: dict[str, Any] | None = None,
        context: dict[str, Any] | InvocationContext | None = None,
        trace: Trace | None = None,
        run: RunState | None = None,
    ) -> ValidationResult | MutationResult:
        """Run one interceptor exactly as `interceptor/invoke` would, without a round trip.

        Without ``run`` the payload is measured afresh; the invokes given one
        `RunState` share what they measured, and the caller promises not to
        change the payload in place between them.
        """
        memo = self._memo(run)
        interceptor, ctx, size = self._prepare(name, event, phase, payload, config, context, memo)
        result = self._evaluate(interceptor, ctx, trace)
        if interceptor.flow_scope is not None and isinstance(result, ValidationResult):
            result = self.flows.apply_now(interceptor.flow_scope, ctx, result, trace)
        if interceptor.limit_scope is not None and isinstance(result, ValidationResult):
            result = self.rate_limits.apply_now(interceptor.limit_scope, ctx, result, trace)
        self._bound_output(result, ctx, size, memo)
        return result

    def _prepare(
        self,
        name: str,
        event: str,
        phase: Phase,
        payload: Any,
        config: dict[str, Any] | None,
        context: dict[str, Any] | InvocationContext | None,
        memo: _RunMemo,
        context_is_wire: bool = False,
    ) -> tuple[CompiledInterceptor, EvalContext, int]:
        """Every check that can refuse the call (-32602), and the payload's size.

        ``context_is_wire``: the context is `_RunMemo.context_wire`'s, which
        nobody changes, so once it passed the finite check in this run it is
        not walked again.
        """
        interceptor = self._interceptors.get(name)
        if interceptor is None:
            raise unknown_interceptor(name, sorted(self._interceptors))
        if not interceptor.hooks(event, phase):
            raise not_hooked(name, event, phase)
        if config:
            check_finite(config, name, "config")
        params = (
            resolve_config(name, interceptor.resolved.params, config)
            if config
            else interceptor.default_config
        )
        bounded = memo.bounded  # `_bounded`'s answer when the run already has it, inline
        if bounded is None or bounded.payload is not payload:
            bounded = self._bounded(payload, name, memo)
        if isinstance(context, InvocationContext):
            context = context.to_wire()
        if context and not (context_is_wire and context is memo.finite_context):
            check_finite(context, name, "context")
            if context_is_wire:
                memo.finite_context = context
        ctx = EvalContext(
            payload,
            event,
            phase,
            params,
            context or {},
            shared=bounded.shared,
            probe=bounded.probe_for(self._probes) if interceptor.consults_probe else None,
        )
        return interceptor, ctx, bounded.size

    def _bounded(self, payload: Any, name: str, memo: _RunMemo) -> _Bounded:
        """The payload's size after the bounds check, walked once per chain run, and
        what its invokes share (`EvalContext.shared`, e.g. `size($)`, and the probe).

        A chain hands the same payload object to every validator of a set, and
        a mutator's output to the next interceptor; the run remembers the last
        payload bounded (or produced, see `_bound_output`), so the walk
        (milliseconds on a megabyte) is not repeated for each interceptor.
        Nothing changes a payload in place during a run (mutators copy on
        write; a provider that may gets a copy); between runs the caller may.
        """
        last = memo.bounded
        if last is not None and last.payload is payload:
            return last
        # Let the last payload's encoding go before this one is made, so its
        # memory is reused (a new block for each costs microseconds).
        memo.bounded = last = None
        size, encoding = measure_bounds(payload, self.limits, name)
        memo.bounded = bounded = _Bounded(payload, size, encoding)
        return bounded

    def _bound_output(
        self,
        result: ValidationResult | MutationResult,
        ctx: EvalContext,
        size: int,
        memo: _RunMemo,
    ) -> None:
        """Remember a mutator's output as bounded when its size follows from the input's.

        Rewriting strings with strings changes the size by the difference of
        their encodings and never the depth; any other change leaves the
        output to be measured by whoever invokes with it next.
        """
        if not isinstance(result, MutationResult) or not result.modified:
            return
        delta = ctx.size_delta
        if delta is not None and size + delta <= self.limits.max_bytes:
            output = result.payload
            bounded = _Bounded(output, size + delta, None)
            probe = ctx.probe
            if probe is not None:
                # Strings for strings: the keys, and so the missing members, are the input's.
                derived = bounded.probe_for(self._probes)
                derived.inherit_members(probe)
                derived.reuse_text(probe)  # when it is this payload's
            memo.bounded = bounded

    @staticmethod
    def _evaluate(
        interceptor: CompiledInterceptor, ctx: EvalContext, trace: Trace | None
    ) -> ValidationResult | MutationResult:
        name = interceptor.name
        started = time.perf_counter()
        try:
            if interceptor.resolved.is_validator:
                return run_validator(name, interceptor.checks, ctx, trace, started)
            return run_mutator(name, interceptor.mutations, ctx, trace, started, interceptor.plan)
        except InterceptorError:
            raise
        except (PayloadTooDeep, RecursionError) as exc:
            raise execution_failed(name, f"payload too deep to evaluate: {exc}") from exc
        except Exception as exc:  # a bug in evaluation must still answer, not crash
            raise execution_failed(name, f"{type(exc).__name__}: {exc}") from exc


async def _within(
    limit: int | None,
    started: float,
    invoke: tuple[str, Phase],
    work: Callable[[], Awaitable[_T]],
) -> _T:
    """``work`` awaited within what is left of the invoke's `timeoutMs`, or the SEP's
    timeout error for ``invoke`` (interceptor, phase); evaluation that never yields
    is checked after it ends instead."""
    if limit is None:
        return await work()
    left = limit / 1000 - (time.perf_counter() - started)
    with anyio.move_on_after(max(left, 0)):
        return await work()
    raise timed_out(invoke[0], limit, invoke[1])


def compile_model(
    result: CheckResult,
    limits: Limits | None = None,
    names: Mapping[str, str] | None = None,
    flows: FlowRuntime | None = None,
    optimize: bool = True,
    rate_limits: RateLimitRuntime | None = None,
) -> PolicySet:
    if not result.ok or result.model is None:
        raise CompileError(result)
    return PolicySet(result.model, limits, names, flows, optimize, rate_limits)


def compile_policies(
    paths: PolicyPaths,
    limits: Limits | None = None,
    flows: FlowRuntime | None = None,
    rate_limits: RateLimitRuntime | None = None,
) -> PolicySet:
    """Check and compile `.policy` files and directories; raise CompileError on errors.

    ``paths`` is one file or directory (a str or Path) or a list of them.
    """
    paths = path_list(paths)
    result = check_paths(paths, limits=limits.source if limits else None)
    absolute = limits.absolute_paths if limits else False
    return compile_model(
        result, limits, file_names(paths, absolute), flows, rate_limits=rate_limits
    )


def compile_sources(
    sources: Mapping[str, SourceInput],
    limits: Limits | None = None,
    flows: FlowRuntime | None = None,
    optimize: bool = True,
    rate_limits: RateLimitRuntime | None = None,
) -> PolicySet:
    """Like `compile_policies`, from in-memory text (or bytes) keyed by file name;
    ``optimize=False`` gives the reference plan (see `compile_interceptor`)."""
    source_limits = limits.source if limits else None
    result = check_sources(sources, limits=source_limits)
    return compile_model(result, limits, flows=flows, optimize=optimize, rate_limits=rate_limits)


class _RunMemo:
    """What a policy set remembers between the invokes of one chain run (`wire.run`)."""

    __slots__ = ("bounded", "context", "finite_context")

    def __init__(self) -> None:
        # The last payload bounded or produced, and what its invokes share.
        self.bounded: _Bounded | None = None
        # The run's context (the chain hands every invoke the same object) and its wire form.
        self.context: tuple[InvocationContext, dict[str, Any]] | None = None
        # That wire form, once it passed the finite check.
        self.finite_context: dict[str, Any] | None = None

    def context_wire(self, context: InvocationContext | None) -> dict[str, Any] | None:
        """The context's wire form, made once per context object in the run."""
        if context is None:
            return None
        last = self.context
        if last is not None and last[0] is context:
            return last[1]
        wire = context.to_wire()
        self.context = (context, wire)
        return wire


class _Bounded:
    """A payload within the limits, and what the invokes on it share.

    One is made per chain run, so it is lean: the probe is made only when an
    interceptor whose rules read it is invoked.
    """

    __slots__ = ("encoding", "payload", "probe", "shared", "size")

    def __init__(self, payload: Any, size: int, encoding: Encoding | None) -> None:
        self.payload = payload
        self.size = size
        # The payload's encoding, when the bounds check made one (for the probe).
        self.encoding = encoding
        # `EvalContext.shared`: `size($)` is the size just measured.
        self.shared: dict[int, Any] = (
            {id(payload): (payload, size)} if isinstance(payload, dict | list) else {}
        )
        self.probe: PayloadProbe | None = None

    def probe_for(self, regexes: ProbeRegexes) -> PayloadProbe:
        if self.probe is None:
            data = self.encoding.plain() if self.encoding is not None else None
            self.probe = PayloadProbe(self.payload, regexes, data)
        return self.probe

"""Stage 5: lints, warnings about policies that are legal but probably wrong."""

from __future__ import annotations

from collections.abc import Iterator

from ..wire.events import event_matches
from . import ast
from .analysis import analyze
from .check_descendant_filters import lint_descendant_filters
from .check_messages import lint_message_placeholders
from .check_quantifiers import lint_context_quantifiers
from .check_url_globs import lint_url_globs
from .diagnostics import Code, Diagnostic
from .model import PolicySetModel, ResolvedInterceptor


def static_truth(condition: ast.Condition, interceptor: ResolvedInterceptor) -> bool | None:
    """True or False when the condition's value is known without a payload, else None."""
    if isinstance(condition, ast.Constant):
        return condition.value
    if isinstance(condition, ast.Not):
        inner = static_truth(condition.operand, interceptor)
        return None if inner is None else not inner
    if isinstance(condition, ast.And):
        values = [static_truth(c, interceptor) for c in condition.operands]
        if any(v is False for v in values):
            return False
        return True if all(v is True for v in values) else None
    if isinstance(condition, ast.Or):
        values = [static_truth(c, interceptor) for c in condition.operands]
        if any(v is True for v in values):
            return True
        return False if all(v is False for v in values) else None
    if (
        isinstance(condition, ast.In)
        and isinstance(condition.container, ast.Literal_)
        and condition.container.value == ()
        and condition.quantifier != "all"
    ):
        return condition.negated
    if isinstance(condition, ast.Compare) and condition.op in ("==", "!="):
        return _compare_against_hooks(condition, interceptor)
    return None


def _compare_against_hooks(node: ast.Compare, interceptor: ResolvedInterceptor) -> bool | None:
    pairs = [(node.left, node.right), (node.right, node.left)]
    for ref, other in pairs:
        if not isinstance(other, ast.Literal_) or not isinstance(other.value, str):
            continue
        hooked = interceptor.hooked()
        if isinstance(ref, ast.PhaseRef):
            values = {p for _, p in hooked}
            possible = other.value in values
            certain = values == {other.value}
        elif isinstance(ref, ast.EventRef):
            possible = any(event_matches(e, other.value) for e, _ in hooked)
            certain = all(e == other.value for e, _ in hooked)
        else:
            continue
        if not possible:
            return node.op == "!="
        if certain:
            return node.op == "=="
    return None


def _rule_condition(rule: ast.Rule) -> tuple[ast.Condition, bool] | None:
    if isinstance(rule, ast.CheckRule):
        return rule.condition, rule.unless
    guard = getattr(rule, "guard", None)
    if isinstance(guard, ast.Guard):
        return guard.condition, guard.unless
    return None


def lint_never_fires(interceptor: ResolvedInterceptor) -> Iterator[Diagnostic]:
    for rule in interceptor.rules:
        found = _rule_condition(rule)
        if found is None:
            continue
        condition, unless = found
        truth = static_truth(condition, interceptor)
        if truth is not None and truth == unless:
            yield Diagnostic(
                Code.W301,
                "this rule can never fire",
                rule.span,
                "its condition is decided by the hooks or by constants alone; fix or remove it",
            )


def lint_audit_fail_closed(interceptor: ResolvedInterceptor) -> Iterator[Diagnostic]:
    if interceptor.mode == "audit" and not interceptor.fail_open:
        span = next(
            (s.span for s in interceptor.node.statements if isinstance(s, ast.ModeSetting)),
            interceptor.node.name_span,
        )
        yield Diagnostic(
            Code.W303,
            f"audit interceptor `{interceptor.name}` is fail-closed",
            span,
            "audit never blocks the message, but a crash still counts as an error; "
            "add `fail open` so audit failures are recorded as warnings",
        )


def lint_validator_cannot_block(interceptor: ResolvedInterceptor) -> Iterator[Diagnostic]:
    if not interceptor.is_validator or interceptor.mode == "audit":
        return
    blocking = any(
        isinstance(r, ast.ListRule | ast.LimitRule | ast.RateLimit)
        or (isinstance(r, ast.CheckRule | ast.FlowRule) and r.severity == "deny")
        for r in interceptor.rules
    )
    if not blocking:
        yield Diagnostic(
            Code.W304,
            f"active validator `{interceptor.name}` has no `deny` rule and can never block",
            interceptor.node.name_span,
            "add a `deny` rule, or set `mode audit` if it only reports",
        )


def _written_paths(interceptor: ResolvedInterceptor) -> dict[str, ast.Rule]:
    paths: dict[str, ast.Rule] = {}
    for rule in interceptor.rules:
        if isinstance(rule, ast.MUTATOR_RULES):
            paths.setdefault(rule.path.source, rule)
    return paths


def _overlap(first: ResolvedInterceptor, second: ResolvedInterceptor, phase: str) -> bool:
    return any(
        p1 == phase == p2 and (event_matches(e1, e2) or event_matches(e2, e1))
        for e1, p1 in first.hooked()
        for e2, p2 in second.hooked()
    )


def lint_mutator_conflicts(model: PolicySetModel) -> Iterator[Diagnostic]:
    """Each mutator is flagged once per path, naming the first mutator it races with:
    a set of n identical mutators gives n - 1 warnings, not n squared."""
    writers: dict[tuple[str, int, str], list[ResolvedInterceptor]] = {}
    for mutator in (i for i in model.interceptors if not i.is_validator):
        for path, rule in _written_paths(mutator).items():
            for phase in ("request", "response"):
                key = (phase, mutator.priorities[phase], path)
                earlier = writers.setdefault(key, [])
                rival = next((m for m in earlier if _overlap(m, mutator, phase)), None)
                earlier.append(mutator)
                if rival is not None:
                    yield Diagnostic(
                        Code.W302,
                        f"`{mutator.name}` and `{rival.name}` both write `{path}` at "
                        f"{phase} priority {key[1]}",
                        rule.span,
                        "their order then depends only on their names; give one of them "
                        "a distinct priority",
                    )
                    break


def lint_interceptor(interceptor: ResolvedInterceptor) -> Iterator[Diagnostic]:
    yield from lint_never_fires(interceptor)
    yield from lint_audit_fail_closed(interceptor)
    yield from lint_validator_cannot_block(interceptor)
    yield from lint_url_globs(interceptor)
    yield from lint_message_placeholders(interceptor)
    yield from lint_context_quantifiers(interceptor)
    yield from lint_descendant_filters(interceptor)


def lint(model: PolicySetModel, max_analysis_steps: int) -> Iterator[Diagnostic]:
    for interceptor in model.interceptors:
        yield from lint_interceptor(interceptor)
    yield from lint_mutator_conflicts(model)
    yield from analyze(model, max_analysis_steps)

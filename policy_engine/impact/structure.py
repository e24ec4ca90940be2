"""The structural half of `policyc diff`: interceptors, descriptors and rules.

Rules are matched by their declared `code`; rules without one are matched by
their structure (AST equality ignores positions), so moving a rule is not a
change. Params (their defaults are what rules compare with), named patterns
and every descriptor field are structural too: a pull request that edits
only those changes meaning without touching a rule. Changes that weaken
enforcement carry a risk note.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from ..language import ast
from ..language.formatter import render_rule
from ..language.model import PolicySetModel, ResolvedInterceptor, ResolvedParam, ResolvedPattern

Item = dict[str, Any]


def _item(change: str, what: str, risk: str | None = None) -> Item:
    item: Item = {"change": change, "what": what}
    if risk:
        item["risk"] = risk
    return item


def _hooks(interceptor: ResolvedInterceptor) -> set[tuple[str, str]]:
    return set(interceptor.hooked())


def _descriptor_changes(old: ResolvedInterceptor, new: ResolvedInterceptor) -> list[Item]:
    name = f"`{new.name}`"
    found: list[Item] = []
    if old.node.kind != new.node.kind:
        found.append(_item("type", f"{name} is now a {new.node.kind}", "enforcement changes kind"))
    if not old.fail_open and new.fail_open:
        found.append(_item("failOpen", f"{name} now fails open", "a crash lets traffic through"))
    elif old.fail_open and not new.fail_open:
        found.append(_item("failOpen", f"{name} now fails closed"))
    if old.mode != new.mode:
        risk = "it no longer blocks or rewrites" if new.mode == "audit" else None
        found.append(_item("mode", f"{name} mode {old.mode} -> {new.mode}", risk))
    lost = sorted(_hooks(old) - _hooks(new))
    gained = sorted(_hooks(new) - _hooks(old))
    if lost:
        hooks = ", ".join(f"{e} {p}" for e, p in lost)
        found.append(
            _item("hooks", f"{name} no longer runs on {hooks}", "those messages are unguarded")
        )
    if gained:
        hooks = ", ".join(f"{e} {p}" for e, p in gained)
        found.append(_item("hooks", f"{name} now also runs on {hooks}"))
    return found


# Descriptor fields with their own, more specific items above (or below, for params).
_DESCRIBED = frozenset({"name", "type", "failOpen", "mode", "hooks", "configSchema"})


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _other_descriptor_changes(old: ResolvedInterceptor, new: ResolvedInterceptor) -> list[Item]:
    """Every other descriptor field (priority, version, compat, ...): nothing changes unseen."""
    found: list[Item] = []
    before, after = old.descriptor_fields, new.descriptor_fields
    for key in sorted((before.keys() | after.keys()) - _DESCRIBED):
        if before.get(key) != after.get(key):
            found.append(
                _item(
                    "descriptor",
                    f"`{new.name}` {key} {_json(before.get(key))} -> {_json(after.get(key))}",
                )
            )
    return found


def _param_text(param: ResolvedParam) -> str:
    default = "" if param.required else f" = {_json(param.default)}"
    return f"param {param.name}: {param.type}{default}"


def _param_changes(old: ResolvedInterceptor, new: ResolvedInterceptor) -> list[Item]:
    """A param's default is what every rule reading it compares with when config is absent."""
    name = f"`{new.name}`"
    found: list[Item] = []
    for key in sorted(old.params.keys() - new.params.keys()):
        found.append(_item("param removed", f"{name} {_param_text(old.params[key])}"))
    for key in sorted(new.params.keys() - old.params.keys()):
        found.append(_item("param added", f"{name} {_param_text(new.params[key])}"))
    for key in sorted(old.params.keys() & new.params.keys()):
        before, after = old.params[key], new.params[key]
        if _param_text(before) != _param_text(after):
            found.append(
                _item(
                    "param changed",
                    f"{name} {_param_text(before)} -> {_param_text(after)}",
                    "rules reading it change without being edited",
                )
            )
    return found


def _pattern_text(pattern: ResolvedPattern) -> str:
    return f"/{pattern.source.replace('/', chr(92) + '/')}/{pattern.flags}"


def _pattern_changes(old: PolicySetModel, new: PolicySetModel) -> list[Item]:
    """Named patterns: widening one changes every rule that uses it, with no rule edited."""
    olds = {k: p for k, p in old.patterns.items() if not p.builtin}
    news = {k: p for k, p in new.patterns.items() if not p.builtin}
    found: list[Item] = []
    for key in sorted(olds.keys() - news.keys()):
        found.append(_item("pattern removed", f"`{key}` {_pattern_text(olds[key])}"))
    for key in sorted(news.keys() - olds.keys()):
        found.append(_item("pattern added", f"`{key}` {_pattern_text(news[key])}"))
    for key in sorted(olds.keys() & news.keys()):
        before, after = olds[key], news[key]
        if (before.source, before.flags, before.check) != (after.source, after.flags, after.check):
            found.append(
                _item(
                    "pattern changed",
                    f"`{key}` {_pattern_text(before)} -> {_pattern_text(after)}",
                    "rules using it change without being edited",
                )
            )
    return found


def _order_changes(old: PolicySetModel, new: PolicySetModel) -> list[Item]:
    """Mutators whose relative order flipped on a phase they both hook."""
    found: list[Item] = []
    olds = {i.name: i for i in old.interceptors if not i.is_validator}
    news = [i for i in new.interceptors if not i.is_validator and i.name in olds]
    for index, first in enumerate(news):
        for second in news[index + 1 :]:
            for phase in ("request", "response"):
                if phase not in first.priorities or phase not in second.priorities:
                    continue
                a0, b0 = (
                    olds[first.name].priorities.get(phase),
                    olds[second.name].priorities.get(phase),
                )
                if a0 is None or b0 is None:
                    continue
                before = (a0 > b0) - (a0 < b0)
                after = (first.priorities[phase] > second.priorities[phase]) - (
                    first.priorities[phase] < second.priorities[phase]
                )
                if before and after and before != after:
                    found.append(
                        _item(
                            "priority",
                            f"`{first.name}` and `{second.name}` swap order on {phase}",
                            "the second now sees the first's output (or no longer does)",
                        )
                    )
    return found


def _rule_text(rule: ast.Rule) -> str:
    return render_rule(rule).strip()


def _fails_open_risk(old: ast.Rule | None, new: ast.Rule) -> str | None:
    """A rate limit that now lets traffic through while its store cannot answer."""
    if not isinstance(new, ast.RateLimit) or not new.fail_open:
        return None
    if isinstance(old, ast.RateLimit) and old.fail_open:
        return None
    return "the limit fails open: a store that is down or slow lets every message through"


def _coded(interceptor: ResolvedInterceptor) -> dict[str, ast.Rule]:
    found: dict[str, ast.Rule] = {}
    for rule in interceptor.rules:
        code = getattr(rule, "code", None)
        if isinstance(code, str):
            found[code] = rule
    return found


def _rule_changes(old: ResolvedInterceptor, new: ResolvedInterceptor) -> list[Item]:
    found: list[Item] = []
    name = new.name
    old_coded = _coded(old)
    new_coded = _coded(new)
    for code in old_coded.keys() - new_coded.keys():
        found.append(_item("rule removed", f"`{name}` `{code}`: {_rule_text(old_coded[code])}"))
    for code in new_coded.keys() - old_coded.keys():
        rule = new_coded[code]
        risk = _fails_open_risk(None, rule)
        found.append(_item("rule added", f"`{name}` `{code}`: {_rule_text(rule)}", risk))
    for code in sorted(old_coded.keys() & new_coded.keys()):
        if old_coded[code] != new_coded[code]:
            found.append(
                _item(
                    "rule changed",
                    f"`{name}` `{code}`: {_rule_text(old_coded[code])} -> "
                    f"{_rule_text(new_coded[code])}",
                    _fails_open_risk(old_coded[code], new_coded[code]),
                )
            )
    old_plain = Counter(r for r in old.rules if not getattr(r, "code", None))
    new_plain = Counter(r for r in new.rules if not getattr(r, "code", None))
    for rule in (old_plain - new_plain).elements():
        found.append(_item("rule removed", f"`{name}` line {rule.span.line}: {_rule_text(rule)}"))
    for rule in (new_plain - old_plain).elements():
        risk = _fails_open_risk(None, rule)
        found.append(
            _item("rule added", f"`{name}` line {rule.span.line}: {_rule_text(rule)}", risk)
        )
    return found


def structural_diff(old: PolicySetModel, new: PolicySetModel) -> list[Item]:
    olds = {i.name: i for i in old.interceptors}
    news = {i.name: i for i in new.interceptors}
    found: list[Item] = []
    for name in olds.keys() - news.keys():
        found.append(_item("removed", f"interceptor `{name}`", "its checks no longer run"))
    for name in sorted(news.keys() - olds.keys()):
        found.append(_item("added", f"interceptor `{name}`"))
    for name in sorted(olds.keys() & news.keys()):
        found.extend(_descriptor_changes(olds[name], news[name]))
        found.extend(_other_descriptor_changes(olds[name], news[name]))
        found.extend(_param_changes(olds[name], news[name]))
        found.extend(_rule_changes(olds[name], news[name]))
    found.extend(_pattern_changes(old, new))
    found.extend(_order_changes(old, new))
    return found

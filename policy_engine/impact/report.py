"""Changes grouped by interceptor and rule, with masked examples, in four formats.

Values in examples are masked unless asked for: a traffic file holds real
payloads. Strings that appear as literals in either policy set (tool names,
model names) are not secrets and are kept, so an example still says which
tool a change is about.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from ..language.hidden import json_escape, visible
from .outcome import CHANGE_TITLES, Change, ChangeKind

Format = Literal["text", "json", "markdown", "github"]
FORMATS: tuple[Format, ...] = ("text", "json", "markdown", "github")


@dataclass
class Group:
    kind: ChangeKind
    interceptor: str
    rule: str
    count: int = 0
    examples: list[Change] = field(default_factory=list)


@dataclass
class ImpactReport:
    title: str
    groups: list[Group]
    messages: int
    notes: list[str] = field(default_factory=list)
    structural: list[dict[str, Any]] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.groups) or bool(self.structural)

    @property
    def changed_messages(self) -> int:
        return sum(g.count for g in self.groups)


class Grouping:
    """Changes counted per (kind, interceptor, rule) as they come, keeping ``examples`` of each."""

    def __init__(self, examples: int) -> None:
        self._examples = examples
        self._groups: dict[tuple[str, str, str], Group] = {}

    def add(self, change: Change) -> None:
        key = (change.kind, change.interceptor, change.rule)
        group = self._groups.get(key)
        if group is None:
            group = self._groups[key] = Group(change.kind, change.interceptor, change.rule)
        group.count += 1
        if len(group.examples) < self._examples:
            group.examples.append(change)

    def groups(self) -> list[Group]:
        order = list(CHANGE_TITLES)
        return sorted(
            self._groups.values(), key=lambda g: (order.index(g.kind), g.interceptor, g.rule)
        )


def mask(value: Any, keep: frozenset[str]) -> Any:
    """Strings replaced by their length, except policy literals; numbers and shape kept."""
    if isinstance(value, dict):
        return {k: mask(v, keep) for k, v in value.items()}
    if isinstance(value, list):
        return [mask(v, keep) for v in value]
    if isinstance(value, str) and value not in keep:
        return f"<{len(value)} chars>"
    return value


def _example(change: Change, keep: frozenset[str] | None) -> dict[str, Any]:
    message = change.message
    payload = message.payload if keep is None else mask(message.payload, keep)
    before = json.loads(change.before.payload)
    after = json.loads(change.after.payload)
    if keep is not None:
        before, after = mask(before, keep), mask(after, keep)
    data: dict[str, Any] = {
        "origin": message.origin,
        "event": message.event,
        "phase": message.phase,
        "side": message.side,
        "payload": payload,
        "before": {"decision": change.before.decision, "severity": change.before.severity},
        "after": {"decision": change.after.decision, "severity": change.after.severity},
    }
    if message.only is not None:
        data["only"] = list(message.only)
    if message.config is not None:
        data["config"] = message.config if keep is None else mask(message.config, keep)
    for side, outcome in (("before", change.before), ("after", change.after)):
        if outcome.decision == "deny" and outcome.blocking:
            # A rule-level change on a message another rule still denies says so.
            data[side]["deniedBy"] = [f"{i} / {r}" for i, r in sorted(outcome.blocking)]
    if change.kind == "mutation":
        data["before"]["payload"] = before
        data["after"]["payload"] = after
    if change.kind in ("severity", "messages"):
        data["before"]["messages"] = [list(m[:3]) for m in change.before.messages]
        data["after"]["messages"] = [list(m[:3]) for m in change.after.messages]
    return data


def to_json(report: ImpactReport, keep: frozenset[str] | None) -> dict[str, Any]:
    return {
        "title": report.title,
        "changed": report.changed,
        "messages": report.messages,
        "changedMessages": report.changed_messages,
        "structural": report.structural,
        "groups": [
            {
                "kind": g.kind,
                "title": CHANGE_TITLES[g.kind],
                "interceptor": g.interceptor,
                "rule": g.rule,
                "count": g.count,
                "examples": [_example(c, keep) for c in g.examples],
            }
            for g in report.groups
        ],
        "notes": report.notes,
    }


def _compact(value: Any) -> str:
    """One-line JSON; a payload's hidden characters stay escapes, not terminal input."""
    return json_escape(json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True))


def render(report: ImpactReport, fmt: Format, keep: frozenset[str] | None) -> str:
    data = to_json(report, keep)
    if fmt == "json":
        return json_escape(json.dumps(data, indent=2, ensure_ascii=False))
    if fmt == "markdown":
        return visible(_markdown(data), keep="\n")
    if fmt == "github":
        return visible(_github(data), keep="\n")
    return visible(_text(data), keep="\n")


def _summary(data: dict[str, Any]) -> str:
    if not data["changed"]:
        return f"no change in behaviour on {data['messages']} message(s)"
    if not data["groups"]:
        # A structural change is a change even when no message tried shows it.
        return (
            f"{len(data['structural'])} structural change(s); no difference in behaviour"
            f" found on {data['messages']} message(s)"
        )
    return (
        f"{data['changedMessages']} of {data['messages']} message(s) behave differently"
        f" in {len(data['groups'])} group(s)"
    )


def _text(data: dict[str, Any]) -> str:
    lines = [f"{data['title']}: {_summary(data)}"]
    for item in data["structural"]:
        risk = f"  [risk: {item['risk']}]" if item.get("risk") else ""
        lines.append(f"  {item['change']}: {item['what']}{risk}")
    for group in data["groups"]:
        title = CHANGE_TITLES[group["kind"]]
        lines.append(f"\n{title}: {group['interceptor']} / {group['rule']} ({group['count']})")
        for example in group["examples"]:
            lines.append(
                f"  {example['origin'] or 'example'}: {example['event']} {example['phase']}"
                f" {_compact(example['payload'])}"
            )
            if "only" in example:
                lines.append(f"    only: {', '.join(example['only'])}")
            if "config" in example:
                lines.append(f"    config: {_compact(example['config'])}")
            if _still_denied(group["kind"], example):
                after = example["after"]["deniedBy"]
                lines.append(f"    still denied by: {', '.join(after)}")
            if "payload" in example["before"]:
                lines.append(f"    before: {_compact(example['before']['payload'])}")
                lines.append(f"    after:  {_compact(example['after']['payload'])}")
            if "messages" in example["before"]:
                lines.append(f"    before: {_compact(example['before']['messages'])}")
                lines.append(f"    after:  {_compact(example['after']['messages'])}")
    lines.extend(f"note: {note}" for note in data["notes"])
    return "\n".join(lines)


def _still_denied(kind: str, example: dict[str, Any]) -> bool:
    """A rule let go of a message another rule still denies."""
    return kind == "blocked-to-allowed" and "deniedBy" in example["after"]


def _markdown(data: dict[str, Any]) -> str:
    lines = [f"### {data['title']}", "", f"**{_summary(data)}**", ""]
    if data["structural"]:
        lines += ["| change | what | risk |", "| --- | --- | --- |"]
        for item in data["structural"]:
            lines.append(f"| {item['change']} | {item['what']} | {item.get('risk') or ''} |")
        lines.append("")
    if data["groups"]:
        lines += ["| outcome | interceptor | rule | messages |", "| --- | --- | --- | ---: |"]
        for group in data["groups"]:
            lines.append(
                f"| {CHANGE_TITLES[group['kind']]} | `{group['interceptor']}` |"
                f" `{group['rule']}` | {group['count']} |"
            )
        lines.append("")
        for group in data["groups"]:
            lines.append(
                f"<details><summary>{CHANGE_TITLES[group['kind']]}: "
                f"<code>{group['interceptor']}</code> / <code>{group['rule']}</code></summary>"
            )
            lines += ["", "```json"]
            lines += [_compact(e) for e in group["examples"]]
            lines += ["```", "", "</details>", ""]
    lines.extend(f"> {note}" for note in data["notes"])
    return "\n".join(lines).rstrip() + "\n"


def _github(data: dict[str, Any]) -> str:
    """Workflow commands: one annotation per group, visible on the pull request."""
    lines = []
    for item in data["structural"]:
        level = "warning" if item.get("risk") else "notice"
        lines.append(f"::{level} title=policy change::{item['change']}: {item['what']}")
    for group in data["groups"]:
        level = "warning" if group["kind"] == "blocked-to-allowed" else "notice"
        lines.append(
            f"::{level} title={CHANGE_TITLES[group['kind']]}::"
            f"{group['interceptor']} / {group['rule']}: {group['count']} message(s)"
        )
    lines.append(_summary(data))
    return "\n".join(lines)

"""What a conformance run found: per fixture, per requirement tag, overall; text and JSON.

A fixture passes only if every step passed. Unsupported and errored fixtures
count as not passing: the pass rate is passed fixtures over all fixtures run,
as the suite defines compliance.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

Status = Literal["pass", "fail", "unsupported", "error"]


@dataclass(frozen=True)
class StepResult:
    index: int
    op: str
    passed: bool
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"index": self.index, "op": self.op, "passed": self.passed}
        if self.detail:
            data["detail"] = self.detail
        return data


@dataclass(frozen=True)
class FixtureResult:
    id: str
    requirement: str
    status: Status
    steps: tuple[StepResult, ...] = ()
    reason: str = ""
    duration_ms: float = 0.0

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    @property
    def step_rate(self) -> str:
        """Steps passed over steps run, or ``-`` when the server never ran any."""
        if not self.steps:
            return "-"
        return f"{sum(step.passed for step in self.steps)}/{len(self.steps)}"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "requirement": self.requirement,
            "status": self.status,
            "steps": [step.to_json() for step in self.steps],
            "durationMs": round(self.duration_ms, 1),
        }
        if self.reason:
            data["reason"] = self.reason
        return data


@dataclass(frozen=True)
class Tally:
    passed: int = 0
    total: int = 0

    @property
    def rate(self) -> Fraction:
        return Fraction(self.passed, self.total) if self.total else Fraction(1)

    @property
    def percent(self) -> float:
        """The suite's compliance figure: a percentage rounded to one decimal place."""
        return round(float(self.rate * 100), 1)

    def add(self, passed: bool) -> Tally:
        return Tally(self.passed + int(passed), self.total + 1)

    def to_json(self) -> dict[str, Any]:
        return {"passed": self.passed, "total": self.total, "percent": self.percent}


@dataclass(frozen=True)
class Report:
    suite: str
    version: str
    server: str
    fixtures: Sequence[FixtureResult]
    by_requirement: dict[str, Tally] = field(init=False)
    overall: Tally = field(init=False)

    def __post_init__(self) -> None:
        tags: dict[str, Tally] = {}
        overall = Tally()
        for result in self.fixtures:
            tags[result.requirement] = tags.get(result.requirement, Tally()).add(result.passed)
            overall = overall.add(result.passed)
        object.__setattr__(self, "by_requirement", tags)
        object.__setattr__(self, "overall", overall)

    def meets(self, threshold_percent: float) -> bool:
        """Whether the exact pass rate reaches ``threshold_percent`` (not the rounded one)."""
        return self.overall.rate * 100 >= Fraction(threshold_percent)

    def to_json(self) -> dict[str, Any]:
        return {
            "suite": self.suite,
            "version": self.version,
            "server": self.server,
            "summary": self.overall.to_json(),
            "requirements": {tag: tally.to_json() for tag, tally in self.by_requirement.items()},
            "fixtures": [result.to_json() for result in self.fixtures],
        }

    def to_text(self) -> str:
        lines = [f"{self.suite} {self.version} against {self.server}", ""]
        width = max((len(r.id) for r in self.fixtures), default=len("fixture"))
        lines.append(f"  {'status':<11} {'fixture':<{width}}  {'steps':>5}  requirement")
        for result in self.fixtures:
            status = result.status.upper()
            lines.append(
                f"  {status:<11} {result.id:<{width}}  {result.step_rate:>5}  {result.requirement}"
            )
            if result.reason:
                lines.append(f"              {result.reason}")
            for step in result.steps:
                if not step.passed:
                    lines.append(f"              step {step.index} ({step.op}): {step.detail}")
        lines += ["", "by requirement:"]
        tag_width = max((len(tag) for tag in self.by_requirement), default=0)
        for tag, tally in self.by_requirement.items():
            lines.append(
                f"  {tag:<{tag_width}}  {tally.passed}/{tally.total}  {tally.percent:.1f}%"
            )
        total = self.overall
        lines += ["", f"{total.passed}/{total.total} fixtures passed ({total.percent:.1f}%)"]
        return "\n".join(lines) + "\n"

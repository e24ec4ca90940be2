"""Reading the conformance suite: the manifest, then every fixture it lists, as typed steps.

The one loader for the suite's files: the runner, the CLI and the tests all
read fixtures through :func:`load_suite`, so a change of fixture format is
made here once. A file that is missing or not in the expected shape raises
:class:`SuiteError` naming the file, never a bare ``KeyError``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from . import SUITE_DIR

Phase = Literal["request", "response"]


class SuiteError(Exception):
    """The suite's files cannot be read or are not in the expected shape."""


@dataclass(frozen=True)
class ListStep:
    """``interceptors/list``, optionally filtered; the result must match in JCS form."""

    event: str | None
    result: Any
    canonical: str
    op: Literal["list"] = "list"


@dataclass(frozen=True)
class InvokeStep:
    """``interceptor/invoke``: either a result (compared in JCS form) or an error code."""

    params: dict[str, Any]
    result: Any = None
    canonical: str | None = None
    error_code: int | None = None
    op: Literal["invoke"] = "invoke"


@dataclass(frozen=True)
class ApplyStep:
    """One chain execution over all of the fixture's interceptors."""

    event: str
    phase: Phase
    payload: Any
    session_id: str | None
    decision: Literal["allow", "deny"]
    final_payload_canonical: str | None = None
    forbids: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    op: Literal["apply"] = "apply"


Step = ListStep | InvokeStep | ApplyStep


@dataclass(frozen=True)
class Fixture:
    id: str
    kind: Literal["protocol", "behavior"]
    requirement: str
    description: str
    interceptors: list[dict[str, Any]]
    steps: tuple[Step, ...]
    volatile: frozenset[str]
    path: Path
    raw: dict[str, Any] = field(repr=False, compare=False)

    @property
    def behaviors(self) -> list[str]:
        """The named behaviours the fixture's interceptors are bound to, in order."""
        return [str(entry["behavior"]) for entry in self.interceptors]


@dataclass(frozen=True)
class Suite:
    name: str
    version: str
    fixtures: tuple[Fixture, ...]

    def select(self, patterns: tuple[str, ...]) -> tuple[Fixture, ...]:
        """Fixtures whose id equals or starts with one of ``patterns`` (all when empty)."""
        if not patterns:
            return self.fixtures
        return tuple(f for f in self.fixtures if any(f.id.startswith(p) for p in patterns))


def load_suite(folder: Path = SUITE_DIR) -> Suite:
    """Every fixture listed in ``manifest.json``, in manifest order."""
    manifest = _read(folder / "manifest.json")
    try:
        entries = manifest["fixtures"]
        fixtures = tuple(_fixture(folder / entry["file"], entry) for entry in entries)
        return Suite(str(manifest["suite"]), str(manifest["version"]), fixtures)
    except (KeyError, TypeError) as exc:
        raise SuiteError(f"{folder / 'manifest.json'}: missing or malformed {exc}") from None


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SuiteError(f"cannot read {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise SuiteError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from None


def _fixture(path: Path, entry: dict[str, Any]) -> Fixture:
    raw = _read(path)
    if not isinstance(raw, dict) or raw.get("id") != entry["id"]:
        raise SuiteError(f"{path}: the fixture's id is not the manifest's `{entry['id']}`")
    try:
        return Fixture(
            id=raw["id"],
            kind=raw["kind"],
            requirement=raw["requirement"],
            description=raw["description"],
            interceptors=list(raw["interceptors"]),
            steps=tuple(_step(step) for step in raw["steps"]),
            volatile=frozenset(raw["volatile"]),
            path=path,
            raw=raw,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise SuiteError(f"{path}: missing or malformed {exc}") from None


def _step(raw: dict[str, Any]) -> Step:
    op = raw["op"]
    expect = raw["expect"]
    if op == "list":
        return ListStep(raw["event"], expect["result"], expect["canonical"])
    if op == "invoke":
        if "errorCode" in expect:
            return InvokeStep(dict(raw["params"]), error_code=int(expect["errorCode"]))
        return InvokeStep(dict(raw["params"]), expect["result"], expect["canonical"])
    if op == "apply":
        context = raw["context"]
        return ApplyStep(
            event=raw["event"],
            phase=raw["phase"],
            payload=raw["payload"],
            session_id=None if context is None else context["sessionId"],
            decision=expect["decision"],
            final_payload_canonical=expect.get("finalPayloadCanonical"),
            forbids=tuple(expect.get("forbids", ())),
            requires=tuple(expect.get("requires", ())),
        )
    raise ValueError(f"step op `{op}`")


def scrub(value: Any, volatile: frozenset[str]) -> Any:
    """``value`` with every key named in ``volatile`` deleted, at any depth."""
    if isinstance(value, dict):
        return {k: scrub(v, volatile) for k, v in value.items() if k not in volatile}
    if isinstance(value, list):
        return [scrub(item, volatile) for item in value]
    return value

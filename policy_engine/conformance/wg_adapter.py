"""The working group's adapter contract (its ADAPTER.md): four calls, not a server.

There an SDK author writes ``createSession(interceptors)`` and a session with
``list``, ``invoke`` and ``chain``, in the SDK's own language, and a runner
replays the fixtures through them. policyc's runner takes such an adapter
as it is:

- ``python:MODULE:ATTR``: a Python object with ``create_session``
  (``createSession`` also taken) returning an async context manager, or an
  awaitable, of a session whose ``list(event)``, ``invoke(params)`` and
  ``chain(event, phase, payload, session_id)`` are awaited; the shape of the
  group's Python runner, imported into this process;
- ``node:PATH[#EXPORT]``: an ES module exporting an adapter object (``EXPORT``,
  else the default export, else the only export with ``createSession``), run
  by ``wg_shim.mjs`` in its own Node process per fixture, the TypeScript
  runner's shape (``chain`` takes one object).

Outcomes are read in either spelling (``error_code``/``errorCode``,
``final_payload``/``finalPayload``; attributes or keys). The MCP envelope
(``_meta``, ``resultType``) is dropped from ``list`` and ``invoke`` results,
as the server runner does. An adapter that cannot bind a behaviour raises
(or rejects) in ``createSession`` with a message starting
``conformance-unsupported:``; the fixture is then unsupported.
"""

from __future__ import annotations

import importlib
import json
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import anyio
from anyio.abc import Process

from .checks import check_apply, check_error, check_result, clip
from .contract import UNSUPPORTED_MARKER
from .report import FixtureResult, Report, Status, StepResult
from .suite import ApplyStep, Fixture, InvokeStep, ListStep, Step, Suite

SHIM = Path(__file__).with_name("wg_shim.mjs")
_ENVELOPE = ("_meta", "resultType")
_LINE_LIMIT = 16 * 1024 * 1024


class WgAdapterError(Exception):
    """The adapter spec is malformed, or its module or object cannot be loaded."""


@dataclass(frozen=True)
class FixtureInterceptor:
    """The group's ``FixtureInterceptor``, with its Python runner's field names."""

    name: str
    type: str
    behavior: str
    events: tuple[str, ...]
    phases: str
    mode: str | None
    fail_open: bool | None


@dataclass(frozen=True)
class InvokeParams:
    name: str
    event: str
    phase: str
    payload: Any


class _Session(Protocol):
    async def list(self, event: str | None) -> Any: ...
    async def invoke(self, params: dict[str, Any]) -> tuple[bool, Any, int | None]: ...
    async def chain(self, step: ApplyStep) -> tuple[str, Any]: ...


@dataclass(frozen=True)
class WgTarget:
    """``python:MODULE:ATTR`` or ``node:PATH[#EXPORT]``."""

    kind: str
    where: str
    name: str | None

    @classmethod
    def parse(cls, spec: str) -> WgTarget:
        kind, _, rest = spec.partition(":")
        if kind == "python":
            module, _, attr = rest.rpartition(":")
            if not module or not attr:
                raise WgAdapterError(f"`{spec}`: write python:MODULE:ATTR")
            return cls("python", module, attr)
        if kind == "node":
            path, _, export = rest.partition("#")
            if not path:
                raise WgAdapterError(f"`{spec}`: write node:PATH or node:PATH#EXPORT")
            return cls("node", str(Path(path).resolve()), export or None)
        raise WgAdapterError(f"`{spec}`: the adapter is python:MODULE:ATTR or node:PATH[#EXPORT]")

    def describe(self) -> str:
        shown = self.where if self.name is None else f"{self.where}:{self.name}"
        return f"working-group adapter {self.kind}:{shown}"

    def load(self) -> Any:
        """The Python adapter object (checked before any fixture runs); None for Node."""
        if self.kind != "python":
            return None
        try:
            module = importlib.import_module(self.where)
        except ImportError as exc:
            raise WgAdapterError(f"cannot import `{self.where}`: {exc}") from None
        adapter = getattr(module, self.name or "", None)
        if adapter is None:
            raise WgAdapterError(f"`{self.where}` has no `{self.name}`")
        if _factory(adapter) is None:
            raise WgAdapterError(f"`{self.where}:{self.name}` has no create_session")
        return adapter


def _field(outcome: Any, *names: str) -> Any:
    for name in names:
        if isinstance(outcome, dict) and name in outcome:
            return outcome[name]
        if hasattr(outcome, name):
            return getattr(outcome, name)
    return None


def _factory(adapter: Any) -> Any:
    if callable(getattr(adapter, "create_session", None)):
        return adapter.create_session
    if callable(getattr(adapter, "createSession", None)):
        return adapter.createSession
    return None


def _unwrapped(result: Any) -> Any:
    if isinstance(result, dict):
        return {k: v for k, v in result.items() if k not in _ENVELOPE}
    return result


def _interceptors(fixture: Fixture) -> tuple[FixtureInterceptor, ...]:
    return tuple(
        FixtureInterceptor(
            name=raw["name"],
            type=raw["type"],
            behavior=raw["behavior"],
            events=tuple(raw["events"]),
            phases=raw["phases"],
            mode=raw.get("mode"),
            fail_open=raw.get("failOpen"),
        )
        for raw in fixture.interceptors
    )


class _PythonSession:
    def __init__(self, session: Any) -> None:
        self._session = session

    async def list(self, event: str | None) -> Any:
        return await self._session.list(event)

    async def invoke(self, params: dict[str, Any]) -> tuple[bool, Any, int | None]:
        wanted = InvokeParams(params["name"], params["event"], params["phase"], params["payload"])
        outcome = await self._session.invoke(wanted)
        return bool(_field(outcome, "ok")), _field(outcome, "result"), _code(outcome)

    async def chain(self, step: ApplyStep) -> tuple[str, Any]:
        outcome = await self._session.chain(step.event, step.phase, step.payload, step.session_id)
        return str(_field(outcome, "decision")), _field(outcome, "final_payload", "finalPayload")


def _code(outcome: Any) -> int | None:
    code = _field(outcome, "error_code", "errorCode")
    return code if isinstance(code, int) else None


@asynccontextmanager
async def _python_session(adapter: Any, fixture: Fixture) -> AsyncIterator[_Session]:
    made = _factory(adapter)(_interceptors(fixture))
    if isinstance(made, AbstractAsyncContextManager):
        async with made as session:
            yield _PythonSession(session)
        return
    session = await made if hasattr(made, "__await__") else made
    try:
        yield _PythonSession(session)
    finally:
        close = getattr(session, "close", None) or getattr(session, "aclose", None)
        if callable(close):
            closed = close()
            if hasattr(closed, "__await__"):
                await closed


class _NodeSession:
    """JSON lines to ``wg_shim.mjs``: ``{id, call, ...}`` in, ``{id, value | error}`` out."""

    def __init__(self, process: Process) -> None:
        self._process = process
        self._buffer = b""
        self._next = 0

    async def call(self, call: str, **args: Any) -> Any:
        assert self._process.stdin is not None and self._process.stdout is not None
        self._next += 1
        line = json.dumps({"id": self._next, "call": call, **args}) + "\n"
        await self._process.stdin.send(line.encode())
        while b"\n" not in self._buffer:
            if len(self._buffer) > _LINE_LIMIT:
                raise RuntimeError("the adapter wrote a line over 16 MiB")
            self._buffer += await self._process.stdout.receive()
        raw, _, self._buffer = self._buffer.partition(b"\n")
        answer = json.loads(raw)
        if "error" in answer:
            raise RuntimeError(str(answer["error"]))
        return answer.get("value")

    async def list(self, event: str | None) -> Any:
        return await self.call("list", event=event)

    async def invoke(self, params: dict[str, Any]) -> tuple[bool, Any, int | None]:
        outcome = await self.call("invoke", params=params)
        return bool(_field(outcome, "ok")), _field(outcome, "result"), _code(outcome)

    async def chain(self, step: ApplyStep) -> tuple[str, Any]:
        outcome = await self.call(
            "chain",
            params={
                "event": step.event,
                "phase": step.phase,
                "payload": step.payload,
                "sessionId": step.session_id,
            },
        )
        return str(_field(outcome, "decision")), _field(outcome, "finalPayload")


@asynccontextmanager
async def _node_session(target: WgTarget, fixture: Fixture) -> AsyncIterator[_Session]:
    argv = ["node", str(SHIM), target.where, *([target.name] if target.name else [])]
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        try:
            process = await anyio.open_process(argv, stderr=errlog)
        except OSError as exc:
            raise RuntimeError(f"cannot start node: {exc.strerror or exc}") from None
        try:
            session = _NodeSession(process)
            try:
                await session.call("createSession", interceptors=list(fixture.interceptors))
            except anyio.EndOfStream:
                errlog.seek(0)
                lines = [line.strip() for line in errlog.read().splitlines() if line.strip()]
                tail = " | ".join(lines[-3:])
                raise RuntimeError(f"the adapter's process ended: {tail}") from None
            yield session
        finally:
            with anyio.CancelScope(shield=True):
                await _end(process)


async def _end(process: Process) -> None:
    if process.stdin is not None:
        await process.stdin.aclose()
    with anyio.move_on_after(5):
        await process.wait()
    if process.returncode is None:
        process.kill()
        await process.wait()


async def _step(session: _Session, step: Step, fixture: Fixture) -> str | None:
    if isinstance(step, ListStep):
        listed = _unwrapped(await session.list(step.event))
        return check_result(listed, step.canonical, fixture.volatile)
    if isinstance(step, InvokeStep):
        ok, result, code = await session.invoke(step.params)
        if step.error_code is not None:
            return check_error(None if ok else code, step.error_code)
        if not ok:
            return f"interceptor/invoke failed: JSON-RPC error {code}"
        assert step.canonical is not None
        return check_result(_unwrapped(result), step.canonical, fixture.volatile)
    decision, final = await session.chain(step)
    return check_apply(decision, final, step, fixture.volatile)


async def run_wg_fixture(
    fixture: Fixture, target: WgTarget, adapter: Any, *, timeout_s: float
) -> FixtureResult:
    """One fresh adapter session for one fixture; every failure becomes a result."""
    started = time.perf_counter()
    steps: list[StepResult] = []
    opened = False
    try:
        with anyio.fail_after(timeout_s):
            context = (
                _python_session(adapter, fixture)
                if target.kind == "python"
                else _node_session(target, fixture)
            )
            async with context as session:
                opened = True
                for index, step in enumerate(fixture.steps):
                    try:
                        detail = await _step(session, step, fixture)
                    except Exception as exc:  # an adapter crash fails the step, not the run
                        detail = clip(f"the adapter raised: {type(exc).__name__}: {exc}")
                    steps.append(StepResult(index, step.op, detail is None, detail or ""))
        status: Status = "pass" if all(s.passed for s in steps) else "fail"
        result = FixtureResult(fixture.id, fixture.requirement, status, tuple(steps))
    except TimeoutError:
        reason = f"no answer within {timeout_s:g} s"
        result = FixtureResult(fixture.id, fixture.requirement, "error", tuple(steps), reason)
    except Exception as exc:
        result = _not_opened(fixture, exc) if not opened else _crashed(fixture, steps, exc)
    elapsed = (time.perf_counter() - started) * 1000
    return FixtureResult(
        result.id, result.requirement, result.status, result.steps, result.reason, elapsed
    )


def _not_opened(fixture: Fixture, exc: Exception) -> FixtureResult:
    message = str(exc)
    _, marker, reason = message.partition(UNSUPPORTED_MARKER)
    if marker:
        why = clip(reason.strip())
        return FixtureResult(fixture.id, fixture.requirement, "unsupported", reason=why)
    why = clip(f"createSession failed: {type(exc).__name__}: {message}")
    return FixtureResult(fixture.id, fixture.requirement, "error", reason=why)


def _crashed(fixture: Fixture, steps: list[StepResult], exc: Exception) -> FixtureResult:
    why = clip(f"the adapter failed: {type(exc).__name__}: {exc}")
    return FixtureResult(fixture.id, fixture.requirement, "error", tuple(steps), why)


async def run_wg_suite(
    suite: Suite,
    target: WgTarget,
    fixtures: Sequence[Fixture] | None = None,
    *,
    timeout_s: float = 30.0,
    jobs: int = 1,
) -> Report:
    """Every fixture (or the ones given) through the adapter; ``jobs`` sessions at a time."""
    adapter = target.load()
    chosen = list(suite.fixtures if fixtures is None else fixtures)
    results: list[FixtureResult | None] = [None] * len(chosen)
    limiter = anyio.CapacityLimiter(max(1, jobs))

    async def one(index: int, fixture: Fixture) -> None:
        async with limiter:
            results[index] = await run_wg_fixture(fixture, target, adapter, timeout_s=timeout_s)

    async with anyio.create_task_group() as tg:
        for index, fixture in enumerate(chosen):
            tg.start_soon(one, index, fixture)
    done = [result for result in results if result is not None]
    return Report(suite.name, suite.version, target.describe(), done)

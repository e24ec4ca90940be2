"""Runs the conformance fixtures against any SEP-2624 interceptor server, one process per fixture.

Each fixture registers its own interceptors, so every fixture gets a fresh
server started from the same command, handed the fixture's ``interceptors``
array as the ``contract`` module says. ``list`` and ``invoke`` steps are sent
over real MCP (stdio, or streamable HTTP when a URL is given) and compared
raw; ``apply`` steps run :mod:`policy_engine.chain` over that server as the
invoker, on the client's side (the request phase is sent, the response
received), with the step's ``sessionId`` in the invocation context.
"""

from __future__ import annotations

import json
import os
import shlex
import socket
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urlsplit

import anyio

from policy_engine.chain import (
    ChainEntry,
    Host,
    InterceptorChain,
    RemoteProvider,
    ServerSpec,
    side_for,
)
from policy_engine.chain.remote import CONNECTION_LOST, UNREACHABLE, is_connection_failure
from policy_engine.wire import ChainExecutionParams, InterceptorError, InvocationContext
from policy_engine.wire.constants import INVOKE_METHOD, LIST_METHOD

from .checks import check_apply, check_error, check_result, clip
from .contract import (
    FIXTURE_ENV,
    INTERCEPTORS_ENV,
    INTERCEPTORS_PLACEHOLDER,
    PORT_PLACEHOLDER,
    UNSUPPORTED_MARKER,
)
from .report import FixtureResult, Report, Status, StepResult
from .suite import ApplyStep, Fixture, InvokeStep, ListStep, Step, Suite

DEFAULT_TIMEOUT_S = 30.0
# How much of a failed server's stderr a report quotes.
_STDERR_TAIL = 400
# How much of one stderr line is read when looking for the unsupported marker.
_STDERR_SCAN_LINE = 64 * 1024
_STOP_GRACE_S = 5.0
_POLL_S = 0.05


@dataclass(frozen=True)
class ServerTarget:
    """How to start the server under test: a command, and a URL when it serves HTTP.

    Both may hold ``{interceptors}`` (the fixture's interceptors file) and
    ``{port}`` (a free port on 127.0.0.1, chosen per fixture).
    """

    command: tuple[str, ...]
    url: str | None = None
    label: str = ""

    def describe(self) -> str:
        if self.label:
            return self.label
        shown = shlex.join(self.command)
        return f"`{shown}` at {self.url}" if self.url else f"`{shown}`"


class _ServerDown(Exception):
    """The server never answered, or stopped answering: not a wrong answer but none."""


async def run_suite(
    suite: Suite,
    target: ServerTarget,
    fixtures: Sequence[Fixture] | None = None,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    jobs: int = 1,
) -> Report:
    """Every fixture (or the ones given) against ``target``; ``jobs`` servers at a time."""
    chosen = list(suite.fixtures if fixtures is None else fixtures)
    results: list[FixtureResult | None] = [None] * len(chosen)
    limiter = anyio.CapacityLimiter(max(1, jobs))

    async def one(index: int, fixture: Fixture) -> None:
        async with limiter:
            results[index] = await run_fixture(fixture, target, timeout_s=timeout_s)

    async with anyio.create_task_group() as tg:
        for index, fixture in enumerate(chosen):
            tg.start_soon(one, index, fixture)
    done = [result for result in results if result is not None]
    return Report(suite.name, suite.version, target.describe(), done)


async def run_fixture(
    fixture: Fixture, target: ServerTarget, *, timeout_s: float = DEFAULT_TIMEOUT_S
) -> FixtureResult:
    """One fresh server for one fixture; every failure becomes a result, never an exception."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="policyc-conformance-") as tmp:
        folder = Path(tmp)
        interceptors = folder / "interceptors.json"
        interceptors.write_text(json.dumps(fixture.interceptors), encoding="utf-8")
        port = _free_port() if _wants_port(target) else None
        command = tuple(_fill(arg, interceptors, port) for arg in target.command)
        url = _fill(target.url, interceptors, port) if target.url else None
        env = {**os.environ, INTERCEPTORS_ENV: str(interceptors), FIXTURE_ENV: fixture.id}
        with (folder / "stderr.log").open("w+", encoding="utf-8", errors="replace") as errlog:
            try:
                with anyio.fail_after(timeout_s):
                    if url is None:
                        spec = ServerSpec(command=command, env=env, id=fixture.id)
                        steps = await _run_steps(fixture, spec, errlog)
                    else:
                        steps = await _run_over_http(fixture, command, url, env, errlog)
                status: Status = "pass" if all(step.passed for step in steps) else "fail"
                result = FixtureResult(fixture.id, fixture.requirement, status, tuple(steps))
            except TimeoutError:
                reason = f"no answer within {timeout_s:g} s{_stderr_note(errlog)}"
                result = FixtureResult(fixture.id, fixture.requirement, "error", reason=reason)
            except _ServerDown as down:
                result = _server_down(fixture, str(down), errlog)
            except Exception as exc:  # a runner bug must not hide the other fixtures' results
                reason = clip(f"the runner failed on this fixture: {type(exc).__name__}: {exc}")
                result = FixtureResult(fixture.id, fixture.requirement, "error", reason=reason)
    elapsed = (time.perf_counter() - started) * 1000
    return FixtureResult(
        result.id, result.requirement, result.status, result.steps, result.reason, elapsed
    )


async def _run_steps(fixture: Fixture, spec: ServerSpec, errlog: TextIO) -> list[StepResult]:
    async with RemoteProvider(spec, errlog=errlog) as remote:
        session = _Session(fixture, remote)
        return [await session.run(index, step) for index, step in enumerate(fixture.steps)]


async def _run_over_http(
    fixture: Fixture,
    command: tuple[str, ...],
    url: str,
    env: dict[str, str],
    errlog: TextIO,
) -> list[StepResult]:
    """Start the server, wait until its port accepts connections, run, stop it."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    try:
        process = await anyio.open_process(
            list(command), env=env, stdout=errlog, stderr=errlog, start_new_session=True
        )
    except OSError as exc:
        raise _ServerDown(f"cannot start `{command[0]}`: {exc.strerror or exc}") from None
    try:
        while True:
            if process.returncode is not None:
                raise _ServerDown(f"the server exited with status {process.returncode}")
            with suppress(OSError):
                stream = await anyio.connect_tcp(host, port)
                await stream.aclose()
                break
            await anyio.sleep(_POLL_S)
        return await _run_steps(fixture, ServerSpec(url=url, id=fixture.id), errlog)
    finally:
        with anyio.CancelScope(shield=True):
            await _stop(process)


async def _stop(process: anyio.abc.Process) -> None:
    if process.returncode is None:
        with suppress(ProcessLookupError):
            process.terminate()
        with anyio.move_on_after(_STOP_GRACE_S):
            await process.wait()
        if process.returncode is None:
            with suppress(ProcessLookupError):
                process.kill()
            await process.wait()
    await process.aclose()


class _Session:
    """One fixture's steps over one server session, with the chain built on first use."""

    def __init__(self, fixture: Fixture, remote: RemoteProvider) -> None:
        self.fixture = fixture
        self.remote = remote
        self.chain: InterceptorChain | None = None

    async def run(self, index: int, step: Step) -> StepResult:
        if isinstance(step, ListStep):
            detail = await self._list(step)
        elif isinstance(step, InvokeStep):
            detail = await self._invoke(step)
        else:
            detail = await self._apply(step)
        return StepResult(index, step.op, detail is None, detail or "")

    async def _request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        try:
            return await self.remote.request(method, params)
        except InterceptorError as err:
            if is_connection_failure(err):
                raise _ServerDown(_reason(err)) from None
            raise

    async def _list(self, step: ListStep) -> str | None:
        params = {} if step.event is None else {"event": step.event}
        try:
            result = await self._request(LIST_METHOD, params)
        except InterceptorError as err:
            return f"interceptors/list failed: JSON-RPC error {err.code} {err.message}"
        return check_result(result, step.canonical, self.fixture.volatile)

    async def _invoke(self, step: InvokeStep) -> str | None:
        try:
            result = await self._request(INVOKE_METHOD, step.params)
        except InterceptorError as err:
            if step.error_code is not None:
                return check_error(err.code, step.error_code)
            return f"interceptor/invoke failed: JSON-RPC error {err.code} {err.message}"
        if step.error_code is not None:
            return check_error(None, step.error_code)
        assert step.canonical is not None
        return check_result(result, step.canonical, self.fixture.volatile)

    async def _apply(self, step: ApplyStep) -> str | None:
        chain = await self._chain()
        context = None if step.session_id is None else InvocationContext(session_id=step.session_id)
        params = ChainExecutionParams(
            event=step.event, phase=step.phase, payload=step.payload, context=context
        )
        result = await chain.execute(params, side=side_for("client", step.phase))
        for entry in result.results:
            if entry.error and entry.error.startswith((UNREACHABLE, CONNECTION_LOST)):
                raise _ServerDown(entry.error)
        decision = "allow" if result.status == "success" else "deny"
        return check_apply(decision, result.final_payload, step, self.fixture.volatile)

    async def _chain(self) -> InterceptorChain:
        if self.chain is None:
            try:
                descriptors = await self.remote.discover()
            except InterceptorError as err:
                if is_connection_failure(err):
                    raise _ServerDown(_reason(err)) from None
                raise _ServerDown(f"discovery failed: {err.message}") from None
            host = Host(self.remote.id, self.remote)
            self.chain = InterceptorChain([ChainEntry(d, host) for d in descriptors])
        return self.chain


def _server_down(fixture: Fixture, why: str, errlog: TextIO) -> FixtureResult:
    """Unsupported when the server said so on stderr, else an error quoting its stderr."""
    for line in _scan(errlog):
        _, marker, reason = line.partition(UNSUPPORTED_MARKER)
        if marker:
            return FixtureResult(
                fixture.id, fixture.requirement, "unsupported", reason=clip(reason.strip())
            )
    reason = f"the server did not answer: {why}{_stderr_note(errlog)}"
    return FixtureResult(fixture.id, fixture.requirement, "error", reason=clip(reason, 800))


def _scan(errlog: TextIO) -> Iterator[str]:
    """The server's stderr line by line, each read at most ``_STDERR_SCAN_LINE`` characters.

    A server may write gigabytes there; it stays on disk and is never read whole.
    """
    errlog.flush()
    errlog.seek(0)
    while line := errlog.readline(_STDERR_SCAN_LINE):
        yield line


def _stderr_note(errlog: TextIO) -> str:
    """The last lines of the server's stderr (where a traceback says what went wrong), joined."""
    errlog.flush()
    raw = errlog.buffer
    raw.seek(0, os.SEEK_END)
    raw.seek(max(0, raw.tell() - _STDERR_TAIL * 4))
    end = raw.read().decode("utf-8", "replace")
    lines = [line.strip() for line in end.splitlines() if line.strip()]
    tail: list[str] = []
    while lines and sum(len(line) + 3 for line in tail) + len(lines[-1]) <= _STDERR_TAIL:
        tail.insert(0, lines.pop())
    return f"; its stderr ends: {' | '.join(tail)}" if tail else ""


def _reason(err: InterceptorError) -> str:
    reason = (err.data or {}).get("reason")
    return f"{err.message}: {reason}" if isinstance(reason, str) else err.message


def _wants_port(target: ServerTarget) -> bool:
    return any(PORT_PLACEHOLDER in part for part in (*target.command, target.url or ""))


def _fill(text: str, interceptors: Path, port: int | None) -> str:
    text = text.replace(INTERCEPTORS_PLACEHOLDER, str(interceptors))
    return text if port is None else text.replace(PORT_PLACEHOLDER, str(port))


def _free_port() -> int:
    """A port the OS just handed out on 127.0.0.1 (free unless someone races for it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port

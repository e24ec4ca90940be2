"""OpenTelemetry traces in process: spans exported over OTLP/HTTP (protobuf) to a real
receiver on 127.0.0.1, the client's `traceparent` continued, the invocation context
carrying the trace, and a malformed `traceparent` ignored (a new trace, never an error)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from otlp_receiver import Receiver, by_name, otlp_receiver

from policy_engine.chain import InterceptorChain
from policy_engine.compiler import compile_policies
from policy_engine.interception import ChainRun, Interception, InterceptionSession, Refuse
from policy_engine.observability import tracing
from policy_engine.server import InterceptorService
from policy_engine.wire import InvokeParams, MutationResult, ValidationResult
from policy_engine.wire.tracecontext import (
    TRACEPARENT_MAX,
    TRACESTATE_MAX,
    from_ids,
    parse_traceparent,
)

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE}-{PARENT}-01"

POLICY = """
validator guard {
  on tools/call request
  deny tools ["shell_exec"] "tool is blocked by policy" code blocked-tool
}
mutator scrub {
  on tools/call request
  redact $..email with "[EMAIL]"
}
"""


class Recording:
    """A local provider in front of the compiled policies that keeps each context it got."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.contexts: list[Any] = []

    def descriptors(self) -> Any:
        return self.inner.descriptors()

    async def invoke(self, params: InvokeParams) -> ValidationResult | MutationResult:
        self.contexts.append(params.context)
        result: ValidationResult | MutationResult = await self.inner.invoke(params)
        return result


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with otlp_receiver() as running:
        tracing.configure(running.url, "policyc-test")
        try:
            yield running
        finally:
            tracing.disable()


@pytest.fixture
def policies(tmp_path: Path) -> Any:
    source = tmp_path / "guard.policy"
    source.write_text(POLICY)
    return compile_policies([source])


@pytest.fixture
async def recording(policies: Any) -> AsyncIterator[tuple[InterceptionSession, Recording]]:
    provider = Recording(policies)
    async with InterceptorChain.connect(local=[provider]) as chain:
        core = Interception(chain, tracer=tracing.active())
        yield InterceptionSession(core, session_id="s-1"), provider


def call(name: str, traceparent: object = TRACEPARENT, **meta: Any) -> dict[str, Any]:
    return {
        "name": name,
        "arguments": {"email": "a@b.example"},
        "_meta": {"traceparent": traceparent, **meta},
    }


async def test_chain_run_continues_the_clients_trace_and_hands_it_to_interceptors(
    receiver: Receiver, recording: tuple[InterceptionSession, Recording]
) -> None:
    session, provider = recording
    outcome = await session.client_request("tools/call", call("shell_exec"))
    assert isinstance(outcome, Refuse)
    active = tracing.active()
    assert active is not None and active.flush()
    spans = receiver.wait_for(lambda got: len(got) >= 3)
    [run] = by_name(spans, "chain tools/call request")
    [guard] = by_name(spans, "interceptor guard")
    [scrub] = by_name(spans, "interceptor scrub")
    assert run.trace_id == guard.trace_id == scrub.trace_id == TRACE
    assert run.parent_span_id == PARENT
    assert guard.parent_span_id == scrub.parent_span_id == run.span_id
    assert run.service == "policyc-test"
    assert run.attributes["policyc.chain.status"] == "validation_failed"
    assert guard.attributes["policyc.outcome"] == "invalid"
    assert guard.attributes["policyc.rules"] == ["blocked-tool"]
    assert scrub.attributes["policyc.outcome"] == "modified"
    # The invocation context of each interceptor: the trace, and that invocation's span.
    by_span = {context.span_id: context for context in provider.contexts}
    assert set(by_span) == {guard.span_id, scrub.span_id}
    assert {context.trace_id for context in provider.contexts} == {TRACE}
    # No payload content in any attribute.
    for span in spans:
        assert "a@b.example" not in repr(span.attributes)
        assert "shell_exec" not in repr(span.attributes)
    assert receiver.content_types[0] == "application/x-protobuf"


async def test_serve_invoke_span_is_a_child_of_the_callers_traceparent(
    receiver: Receiver, policies: Any
) -> None:
    service = InterceptorService(lambda: policies)
    raw = {
        "name": "guard",
        "event": "tools/call",
        "phase": "request",
        "payload": {"name": "shell_exec", "arguments": {}},
        "_meta": {"traceparent": TRACEPARENT, "tracestate": "vendor=abc"},
    }
    result = await service.invoke(raw)
    assert result["valid"] is False
    active = tracing.active()
    assert active is not None and active.flush()
    [span] = receiver.wait_for(lambda got: len(got) >= 1)
    assert (span.name, span.trace_id, span.parent_span_id) == ("interceptor/invoke", TRACE, PARENT)
    assert span.kind == 2  # SERVER
    assert span.attributes["policyc.interceptor"] == "guard"
    assert span.attributes["policyc.outcome"] == "invalid"
    assert span.attributes["policyc.rules"] == ["blocked-tool"]


@pytest.mark.parametrize(
    "malformed",
    [
        "garbage",
        f"00-{TRACE}-{PARENT}-01-extra",  # version 00 has exactly four fields
        f"ff-{TRACE}-{PARENT}-01",  # version ff is invalid
        f"00-{'0' * 32}-{PARENT}-01",  # all-zero trace id
        f"00-{TRACE.upper()}-{PARENT}-01",  # upper-case hex
        "00-" + "a" * 10_000,  # far beyond the bound
        12345,
        None,
    ],
)
async def test_a_malformed_traceparent_starts_a_new_trace_and_is_never_an_error(
    receiver: Receiver, recording: tuple[InterceptionSession, Recording], malformed: object
) -> None:
    session, provider = recording
    outcome = await session.client_request("tools/call", call("read_file", malformed))
    assert not isinstance(outcome, Refuse)
    active = tracing.active()
    assert active is not None and active.flush()
    spans = receiver.wait_for(lambda got: len(got) >= 3)
    [run] = by_name(spans, "chain tools/call request")
    assert run.trace_id != TRACE and run.parent_span_id == ""
    assert {context.trace_id for context in provider.contexts} == {run.trace_id}


def test_traceparent_parsing_follows_w3c_and_is_bounded() -> None:
    parsed = parse_traceparent(TRACEPARENT, "a=1")
    assert parsed is not None
    assert (parsed.trace_id, parsed.span_id, parsed.sampled, parsed.tracestate) == (
        TRACE,
        PARENT,
        True,
        "a=1",
    )
    assert parsed.header() == TRACEPARENT
    # A later version may append fields; a tracestate over the bound is dropped, not cut.
    later = parse_traceparent(f"01-{TRACE}-{PARENT}-00-more", "x" * (TRACESTATE_MAX + 1))
    assert later is not None and later.tracestate is None and not later.sampled
    assert parse_traceparent(f"01-{TRACE}-{PARENT}-00-" + "m" * TRACEPARENT_MAX) is None
    assert parse_traceparent(f"00-{TRACE}-{'0' * 16}-01") is None
    assert from_ids(TRACE, PARENT) is not None
    assert from_ids("t-1", "s-1") is None  # the SEP leaves the format open: not a parent


async def test_without_tracing_the_clients_trace_still_reaches_the_context(
    policies: Any,
) -> None:
    assert tracing.active() is None
    provider = Recording(policies)
    runs: list[ChainRun] = []
    async with InterceptorChain.connect(local=[provider]) as chain:
        session = InterceptionSession(Interception(chain, observer=runs.append), session_id="s-1")
        await session.client_request("tools/call", call("read_file"))
        await session.client_request("tools/call", call("read_file", traceparent="00-bad"))
    assert {(c.trace_id, c.span_id) for c in provider.contexts} == {(TRACE, PARENT), (None, None)}
    # What a decision log joins on: the parsed id, never a malformed value.
    assert [run.trace_id for run in runs] == [TRACE, None]


def test_the_engine_never_imports_opentelemetry_unless_asked() -> None:
    """Without `--otlp-endpoint` (or the environment's) neither the OpenTelemetry SDK nor
    the exporter loads, so the engine runs without the `otel` extra (the API alone comes
    with the MCP SDK, which imports it itself)."""
    code = (
        "import sys\n"
        "import policy_engine.cli.main, policy_engine.gateway, policy_engine.server\n"
        "import policy_engine.interception, policy_engine.observability.tracing\n"
        "wanted = ('opentelemetry.sdk', 'opentelemetry.exporter', 'opentelemetry.proto')\n"
        "print(sorted(m for m in sys.modules if m.startswith(wanted)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "[]"


def test_asking_for_traces_without_the_extra_is_a_usage_error_naming_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """As if `policyc[otel]` were not installed: the SDK cannot be imported."""
    from policy_engine.cli.tracing_options import start_tracing

    monkeypatch.setitem(sys.modules, "opentelemetry.sdk.resources", None)
    with pytest.raises(SystemExit) as exited:
        start_tracing("http://127.0.0.1:4318", None)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "--otlp-endpoint" in err and "pip install 'policyc[otel]'" in err
    assert "Traceback" not in err and tracing.active() is None
    with pytest.raises(SystemExit) as exited:
        start_tracing("ftp://collector", None)
    assert exited.value.code == 2 and "not an http:// or https:// URL" in capsys.readouterr().err


def test_without_a_flag_or_the_variables_tracing_stays_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from policy_engine.cli.tracing_options import start_tracing

    monkeypatch.delenv(tracing.ENDPOINT_ENV, raising=False)
    monkeypatch.delenv(tracing.TRACES_ENDPOINT_ENV, raising=False)
    start_tracing(None, "ignored")
    assert tracing.active() is None
    assert tracing.wanted(None, {tracing.ENDPOINT_ENV: "http://c:4318"})
    assert tracing.traces_url("http://c:4318/") == "http://c:4318/v1/traces"
    assert tracing.traces_url("http://c:4318/v1/traces") == "http://c:4318/v1/traces"


CLIENT_TEXT = "notifications/SECRET-sk_live_123 user@example.com"


async def test_a_client_chosen_event_never_names_a_span_or_an_attribute(
    receiver: Receiver, tmp_path: Path
) -> None:
    """A policy hooked `on *` runs for any notification a client invents; the chain span's
    name and attributes show `(unknown)` for it, and so does a `policyc serve` invoke
    whose `event` is the caller's free text."""
    source = tmp_path / "all.policy"
    source.write_text('validator watch {\n  on * request\n  deny if $.x == "never" "no"\n}\n')
    policies = compile_policies([source])
    async with InterceptorChain.connect(local=[policies]) as chain:
        session = InterceptionSession(Interception(chain, tracer=tracing.active()))
        meta = {"_meta": {"traceparent": TRACEPARENT}}
        await session.notification(CLIENT_TEXT, meta, origin="client", server=None)
    service = InterceptorService(lambda: policies)
    raw = {"name": "watch", "event": CLIENT_TEXT, "phase": "request", "payload": {}}
    await service.invoke(raw)
    active = tracing.active()
    assert active is not None and active.flush()
    spans = receiver.wait_for(lambda got: len(got) >= 3)
    assert "chain (unknown) request" in {span.name for span in spans}
    invoke = by_name(spans, "interceptor/invoke")
    assert invoke and invoke[0].attributes["policyc.event"] == "(unknown)"
    for span in spans:
        assert "SECRET" not in span.name and "SECRET" not in repr(span.attributes)


async def test_a_task_started_detached_does_not_inherit_the_request_span(
    receiver: Receiver,
) -> None:
    """A backend's reader loop started while `initialize` is traced outlives it: chain
    runs for what that backend sends later must not be children of the ended request."""
    active = tracing.active()
    assert active is not None
    parents: dict[str, str] = {}

    async def later(name: str, *, task_status: Any) -> None:
        task_status.started()
        run = active.chain_run("tools/list", "response", None)
        run.end()
        parents[name] = run.trace_id

    async with anyio.create_task_group() as group:
        with active.request("gateway initialize", {}) as request:
            await group.start(later, "inherited")
            with tracing.detached():
                await group.start(later, "detached")
    assert parents["inherited"] == request.trace_id
    assert parents["detached"] != request.trace_id

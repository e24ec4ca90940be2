"""Traces across real processes: a client's `traceparent` through a real `policyc gateway
--http` to a real remote `policyc serve --http`, both exporting over OTLP/HTTP to a real
receiver started here, whose protobuf bodies are decoded with `opentelemetry-proto`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest
from gateway_harness import ROOT, TEST_POLICIES, free_port, gateway_argv, recorder, running
from mcp import Client
from mcp.shared.exceptions import MCPError
from otlp_receiver import ReceivedSpan, by_name, otlp_receiver

pytestmark = pytest.mark.e2e

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE}-{PARENT}-01"
CLI = [sys.executable, "-m", "policy_engine.cli.main"]
# Export each batch within 50 ms, not the default 5 s: the standard variable, honoured.
FAST_EXPORT = {"OTEL_BSP_SCHEDULE_DELAY": "50"}


def _one(spans: list[ReceivedSpan], name: str, service: str) -> ReceivedSpan:
    [span] = [s for s in by_name(spans, name) if s.service == service]
    return span


async def test_a_clients_trace_runs_through_gateway_chain_and_remote_interceptor(
    tmp_path: Path,
) -> None:
    decisions = tmp_path / "serve-decisions.jsonl"
    with otlp_receiver() as receiver:
        serve_port, gateway_port = free_port(), free_port()
        serve = [*CLI, "serve", str(ROOT / "policies" / "tool-guard.policy")]
        serve += ["--http", f"127.0.0.1:{serve_port}", "--decision-log", str(decisions)]
        serve += ["--otlp-endpoint", receiver.url, "--otel-service-name", "remote-guard"]
        gateway = [sys.executable, *gateway_argv("--http", f"127.0.0.1:{gateway_port}")]
        gateway[gateway.index("gateway") + 1 :] = [str(TEST_POLICIES)]
        gateway += ["--http", f"127.0.0.1:{gateway_port}"]
        gateway += ["--interceptors", f"http://127.0.0.1:{serve_port}/mcp"]
        gateway += ["--backend", recorder(tmp_path / "calls.log")]
        gateway += ["--otlp-endpoint", f"{receiver.url}/v1/traces"]  # the full URL works too
        # The service name from the standard variable, the endpoint from the flag.
        with (
            running(serve, serve_port, env=FAST_EXPORT) as _,
            running(
                gateway, gateway_port, env={**FAST_EXPORT, "OTEL_SERVICE_NAME": "edge-gateway"}
            ) as url,
        ):
            with anyio.fail_after(120):
                async with Client(url, mode="legacy") as client:
                    meta = {"traceparent": TRACEPARENT, "tracestate": "vendor=1"}
                    with pytest.raises(MCPError):
                        await client.call_tool("shell_exec", {"command": "ls"}, meta=meta)

            def arrived(spans: list[ReceivedSpan]) -> bool:
                edge = {s.name for s in spans if s.service == "edge-gateway"}
                remote = [s for s in spans if s.service == "remote-guard"]
                return {"gateway tools/call", "interceptor tool-guard"} <= edge and len(remote) == 2

            spans = receiver.wait_for(arrived)
    request = _one(spans, "gateway tools/call", "edge-gateway")
    run = _one(spans, "chain tools/call request", "edge-gateway")
    guard = _one(spans, "interceptor tool-guard", "edge-gateway")
    local = _one(spans, "interceptor no-env-on-everything", "edge-gateway")
    invokes = by_name(spans, "interceptor/invoke")
    [remote] = [s for s in invokes if s.attributes["policyc.interceptor"] == "tool-guard"]
    [admin] = [s for s in invokes if s.attributes["policyc.interceptor"] == "admin-only-tools"]
    assert (
        admin.parent_span_id == _one(spans, "interceptor admin-only-tools", "edge-gateway").span_id
    )
    assert remote.service == admin.service == "remote-guard"
    assert {request.trace_id, run.trace_id, guard.trace_id, remote.trace_id} == {TRACE}
    assert request.parent_span_id == PARENT
    assert run.parent_span_id == request.span_id
    assert guard.parent_span_id == local.parent_span_id == run.span_id
    assert remote.parent_span_id == guard.span_id
    assert guard.attributes["policyc.remote"] is True
    assert guard.attributes["policyc.outcome"] == "invalid"
    assert remote.attributes["policyc.rules"] == ["blocked-tool"]
    assert run.attributes["policyc.chain.status"] == "validation_failed"
    # The SEP invocation context the remote interceptor server saw: the client's trace.
    lines = [json.loads(line) for line in decisions.read_text().splitlines() if line]
    assert [line["traceId"] for line in lines] == [TRACE, TRACE]
    for span in spans:
        assert "ls" not in span.attributes.values()


async def test_stdio_gateway_without_the_flag_honours_the_standard_endpoint_variable(
    tmp_path: Path,
) -> None:
    """`OTEL_EXPORTER_OTLP_ENDPOINT` alone turns tracing on; a malformed traceparent from
    the client starts a new trace and the call still succeeds."""
    from mcp.client.stdio import StdioServerParameters, stdio_client

    with otlp_receiver() as receiver:
        argv = gateway_argv("--backend", recorder(tmp_path / "calls.log"))
        env = {**FAST_EXPORT, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url}
        params = StdioServerParameters(command=sys.executable, args=argv, cwd=str(ROOT), env=env)
        with anyio.fail_after(120):
            async with Client(stdio_client(params), mode="legacy") as client:
                meta = {"traceparent": "00-" + "z" * 200}
                result = await client.call_tool("echo", {"text": "hello"}, meta=meta)
                assert not result.is_error
            spans = receiver.wait_for(lambda got: bool(by_name(got, "gateway tools/call")))
    request = by_name(spans, "gateway tools/call")[0]
    assert request.service == "policyc" and request.parent_span_id == ""
    assert request.trace_id != TRACE


async def test_the_backend_is_sent_the_gateways_span_not_the_clients(tmp_path: Path) -> None:
    """An intermediary continues the trace: the backend's `_meta.traceparent` names the
    gateway's `backend tools/call` client span (a child of its request span); the
    decision log's lines carry the trace id."""
    from mcp.client.stdio import StdioServerParameters, stdio_client

    log = tmp_path / "calls.log"
    with otlp_receiver() as receiver:
        argv = gateway_argv("--backend", recorder(log), "--otlp-endpoint", receiver.url)
        argv += ["--decision-log", str(tmp_path / "decisions.jsonl")]
        params = StdioServerParameters(
            command=sys.executable, args=argv, cwd=str(ROOT), env=FAST_EXPORT
        )
        with anyio.fail_after(120):
            async with Client(stdio_client(params), mode="legacy") as client:
                meta = {"traceparent": TRACEPARENT, "tracestate": "vendor=1"}
                result = await client.call_tool("echo", {"text": "hello"}, meta=meta)
                assert not result.is_error
            spans = receiver.wait_for(lambda got: bool(by_name(got, "backend tools/call")))
    [outgoing] = by_name(spans, "backend tools/call")
    [request] = by_name(spans, "gateway tools/call")
    assert outgoing.trace_id == request.trace_id == TRACE
    assert outgoing.parent_span_id == request.span_id and request.parent_span_id == PARENT
    assert outgoing.attributes["policyc.server"] == "rec"
    [sent] = [json.loads(line) for line in log.read_text().splitlines() if line]
    assert sent["traceparent"] == f"00-{TRACE}-{outgoing.span_id}-01"
    # The gateway's decision log joins its lines to the trace.
    decided = [json.loads(line) for line in (tmp_path / "decisions.jsonl").read_text().splitlines()]
    call = [d for d in decided if d["event"] == "tools/call"]
    assert call and {d["traceId"] for d in call} == {TRACE}

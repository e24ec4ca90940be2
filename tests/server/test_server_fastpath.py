"""When the stdio fast lane may answer a call, and when it must leave it to the SDK."""

from __future__ import annotations

from typing import Any

from fixture_providers import DEFAULT_SPECS, FixtureProvider
from mcp_types import JSONRPCError, JSONRPCRequest, JSONRPCResponse

from policy_engine.server import InterceptorService, static_source
from policy_engine.server.fastpath import FastLane

ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def lane() -> FastLane:
    service = InterceptorService(static_source(FixtureProvider(DEFAULT_SPECS)))
    return FastLane(service, lambda: {"name": "policyc", "version": "test"})


def call(request_id: int, method: str = "interceptor/invoke", **params: Any) -> JSONRPCRequest:
    return JSONRPCRequest(jsonrpc="2.0", id=request_id, method=method, params=params or None)


def test_legacy_calls_wait_for_the_sdk_to_finish_the_handshake() -> None:
    fast = lane()
    early = call(5)
    fast.observe_inbound(call(1, "initialize", protocolVersion="2025-11-25"))
    assert not fast.claims(early)
    fast.observe_outbound(JSONRPCError(jsonrpc="2.0", id=99, error={"code": 1, "message": "x"}))
    assert not fast.claims(early)
    fast.observe_outbound(JSONRPCResponse(jsonrpc="2.0", id=1, result={}))
    assert fast.claims(early)
    assert fast.claims(call(6, "interceptors/list"))
    assert not fast.claims(call(7, "ping"))
    # A 2026 envelope on a handshake connection is the SDK's to refuse.
    assert not fast.claims(call(8, _meta=ENVELOPE))


def test_modern_calls_need_a_valid_envelope() -> None:
    fast = lane()
    fast.observe_inbound(call(1, "server/discover", _meta=ENVELOPE))
    assert fast.claims(call(2, _meta=ENVELOPE))
    assert not fast.claims(call(3))
    unsupported = {**ENVELOPE, "io.modelcontextprotocol/protocolVersion": "1999-01-01"}
    assert not fast.claims(call(4, _meta=unsupported))
    no_capabilities = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    assert not fast.claims(call(5, _meta=no_capabilities))


async def test_answers_are_complete_json_rpc_lines() -> None:
    fast = lane()
    fast.observe_inbound(call(1, "server/discover", _meta=ENVELOPE))
    ok = await fast.answer(
        call(2, name="allow-all", event="tools/call", phase="request", payload={}, _meta=ENVELOPE)
    )
    assert ok.endswith(b"\n")
    reply = JSONRPCResponse.model_validate_json(ok)
    assert reply.result["valid"] is True
    assert reply.result["resultType"] == "complete"
    assert reply.result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "policyc"
    failed = JSONRPCError.model_validate_json(await fast.answer(call(3, name="x", _meta=ENVELOPE)))
    assert (failed.id, failed.error.code) == (3, -32602)

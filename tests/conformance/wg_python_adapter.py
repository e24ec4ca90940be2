"""An adapter in the working group's Python shape (its runner's `Adapter` protocol).

``create_session(interceptors)`` is an async context manager of a session
with ``list``, ``invoke`` and ``chain``. Like the group's own Python adapter,
the interceptors are registered on a real MCP server (policyc's, bound by
`policy_engine.conformance.adapter`) reached over an in-memory MCP
connection, so ``list`` and ``invoke`` return what goes on the wire (MCP
envelope included); ``chain`` runs policyc's chain on the client's side.
``RAW_ADAPTER`` writes defaults out on ``list``, which the fixtures forbid.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Literal

import mcp_types
from mcp import Client
from mcp.shared.exceptions import MCPError
from pydantic import ConfigDict, TypeAdapter

from policy_engine.chain import ChainEntry, Host, InterceptorChain, side_for
from policy_engine.conformance.adapter import Unsupported, bind
from policy_engine.server import build_server, static_source
from policy_engine.wire import ChainExecutionParams, InvocationContext

_RAW = TypeAdapter(dict[str, Any])


class _Params(mcp_types.RequestParams):
    model_config = ConfigDict(extra="allow")


@dataclass(frozen=True, kw_only=True)
class InvokeOutcome:
    ok: bool
    result: Any = None
    error_code: int | None = None


@dataclass(frozen=True, kw_only=True)
class ChainOutcome:
    decision: Literal["allow", "deny"]
    final_payload: Any


@dataclass(frozen=True)
class _Session:
    client: Client
    chain_: InterceptorChain
    raw: bool

    async def _request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        request = mcp_types.Request[_Params, str](method=method, params=_Params(**params))
        result: dict[str, Any] = await self.client.session.send_request(request, _RAW)
        return result

    async def list(self, event: str | None) -> Any:
        listed = await self._request("interceptors/list", {} if event is None else {"event": event})
        if self.raw:
            for descriptor in listed["interceptors"]:
                descriptor.setdefault("failOpen", False)
        return listed

    async def invoke(self, params: Any) -> InvokeOutcome:
        wire = {k: getattr(params, k) for k in ("name", "event", "phase", "payload")}
        try:
            return InvokeOutcome(ok=True, result=await self._request("interceptor/invoke", wire))
        except MCPError as err:
            return InvokeOutcome(ok=False, error_code=err.code)

    async def chain(self, event: str, phase: Any, payload: Any, session_id: str | None) -> Any:
        context = None if session_id is None else InvocationContext(session_id=session_id)
        params = ChainExecutionParams(event=event, phase=phase, payload=payload, context=context)
        result = await self.chain_.execute(params, side=side_for("client", phase))
        decision: Literal["allow", "deny"] = "allow" if result.status == "success" else "deny"
        return ChainOutcome(decision=decision, final_payload=result.final_payload)


@dataclass(frozen=True)
class PolicycWgAdapter:
    name: str
    raw: bool = False

    @asynccontextmanager
    async def create_session(self, interceptors: tuple[Any, ...]) -> AsyncIterator[_Session]:
        entries = [_entry(i) for i in interceptors]
        try:
            provider = bind(entries)
        except Unsupported as exc:
            raise RuntimeError(f"conformance-unsupported: {exc}") from None
        server = build_server(static_source(provider))
        host = Host("session", provider)
        chain = InterceptorChain([ChainEntry(d, host) for d in provider.descriptors()])
        async with Client(server) as client:
            yield _Session(client, chain, self.raw)


def _entry(i: Any) -> dict[str, Any]:
    """The fixture's JSON object back from the Python runner's dataclass fields."""
    entry: dict[str, Any] = {
        "name": i.name,
        "type": i.type,
        "behavior": i.behavior,
        "events": list(i.events),
        "phases": i.phases,
    }
    if i.mode is not None:
        entry["mode"] = i.mode
    if i.fail_open is not None:
        entry["failOpen"] = i.fail_open
    return entry


ADAPTER = PolicycWgAdapter("policyc-in-memory")
RAW_ADAPTER = PolicycWgAdapter("policyc-defaults-written-out", raw=True)

"""Policies inside a FastMCP server, through FastMCP's own middleware.

FastMCP (``pip install 'policyc[fastmcp]'``) hands its middleware typed
objects (``ToolResult``, ``Tool`` lists, ``PromptResult``...), not the wire
payloads a policy is written against. This middleware turns each into its wire
form, runs the same interception core as the ``mcp`` SDK middleware and the
gateway (the same skips, sides, blocks, list filtering and hidden-element
refusals), and turns the chain's payload back. A change a policy makes that
FastMCP's objects cannot carry (a renamed listed tool, a new list element)
fails closed with an internal error instead of being dropped silently.

Add it with ``mcp.add_middleware(FastMCPPolicyMiddleware(policies))``; it acts
for the server, so a request is received (validate, then mutate) and its
result sent (mutate, then validate).
"""

from __future__ import annotations

import base64
import itertools
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import mcp_types as mt
from fastmcp import FastMCP
from fastmcp.prompts.base import Message, Prompt, PromptResult
from fastmcp.resources.base import Resource, ResourceContent, ResourceResult
from fastmcp.resources.template import ResourceTemplate
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools.base import Tool, ToolResult
from pydantic import BaseModel

from policy_engine.chain import Selector
from policy_engine.interception import (
    BlockStyle,
    ChainRun,
    Forward,
    Interception,
    InterceptionSession,
    Refuse,
)
from policy_engine.wire import InterceptorOverrides, Principal, Refusal
from policy_engine.wire.constants import SKIPPED_METHODS
from policy_engine.wire.errors import INTERNAL_ERROR

from .blocked import PolicyBlocked
from .chain import Providers, local_chain
from .listing import mark_listed

Identify = Callable[[MiddlewareContext[Any]], Principal | None]
"""Who is asking, per call: e.g. from FastMCP's verified access token."""

_TYPED = frozenset(
    {
        "tools/call",
        "tools/list",
        "prompts/get",
        "prompts/list",
        "resources/read",
        "resources/list",
        "resources/templates/list",
    }
)
"""Methods FastMCP gives a typed hook; every other request goes through ``on_request``."""

_EDITABLE: Mapping[str, str] = {
    "title": "title",
    "description": "description",
    "inputSchema": "parameters",
    "outputSchema": "output_schema",
}
"""Wire keys of a listed element a policy may change, and the FastMCP field each sets."""


_LEARN: Mapping[str, str] = {
    "tools/call": "tools/list",
    "prompts/get": "prompts/list",
    "resources/read": "resources/list",
}
"""The list whose filtering a call must respect, even when this connection never listed it."""


@dataclass(frozen=True)
class _Listing:
    key: str
    ident: str
    wire: Callable[[Any], BaseModel]
    everything: Callable[[FastMCP], Awaitable[Sequence[Any]]]
    """The whole list, past other middleware: what the policy filters when learning."""


_LISTINGS: Mapping[str, _Listing] = {
    "tools/list": _Listing(
        "tools", "name", lambda t: t.to_mcp_tool(), lambda s: s.list_tools(run_middleware=False)
    ),
    "prompts/list": _Listing(
        "prompts",
        "name",
        lambda p: p.to_mcp_prompt(),
        lambda s: s.list_prompts(run_middleware=False),
    ),
    "resources/list": _Listing(
        "resources",
        "uri",
        lambda r: r.to_mcp_resource(),
        lambda s: s.list_resources(run_middleware=False),
    ),
    "resources/templates/list": _Listing(
        "resourceTemplates",
        "uriTemplate",
        lambda t: t.to_mcp_template(),
        lambda s: s.list_resource_templates(run_middleware=False),
    ),
}


class _Unrepresentable(Exception):
    """The chain changed a listed element in a way FastMCP's objects cannot carry."""


class FastMCPPolicyMiddleware(Middleware):
    """A FastMCP ``Middleware`` running local policies, one interception session per connection."""

    def __init__(
        self,
        policies: Providers,
        *,
        block_style: BlockStyle = "error",
        principal: Principal | Identify | None = None,
        overrides: Mapping[Selector, InterceptorOverrides] | None = None,
        chain_timeout_ms: int | None = None,
        observer: Callable[[ChainRun], None] | None = None,
        server_name: str | None = None,
    ) -> None:
        self.interception = Interception(
            local_chain(policies, overrides=overrides),
            acts_for="server",
            block_style=block_style,
            chain_timeout_ms=chain_timeout_ms,
            observer=observer,
        )
        self.principal = principal
        self.server_name = server_name
        self._sessions: weakref.WeakKeyDictionary[Any, InterceptionSession] = (
            weakref.WeakKeyDictionary()
        )
        self._ids = itertools.count(1)

    def session_for(self, context: MiddlewareContext[Any]) -> InterceptionSession:
        """This connection's interception session (what its lists hid), as this call's principal."""
        fastmcp_context = context.fastmcp_context
        connection = _connection(fastmcp_context)
        session = self._sessions.get(connection) if connection is not None else None
        if session is None:
            session = InterceptionSession(self.interception, session_id=f"conn-{next(self._ids)}")
            if connection is not None:
                self._sessions[connection] = session
        principal = self.principal(context) if callable(self.principal) else self.principal
        return session.bound(principal=principal) if principal is not None else session

    # typed component hooks

    async def on_call_tool(
        self,
        context: MiddlewareContext[mt.CallToolRequestParams],
        call_next: CallNext[mt.CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        session = self.session_for(context)
        await self._learn(context, session, "tools/call")
        params = await self._request(session, "tools/call", _dump(context.message))
        if isinstance(params, Refuse):
            return _tool_result(_refused("tools/call", params))
        message = mt.CallToolRequestParams.model_validate(params)
        result = await call_next(context.copy(message=message))
        wire = _dump(mt.CallToolResult.model_validate(_as_call_result(result)))
        return _tool_result(await self._response(session, "tools/call", wire))

    async def on_get_prompt(
        self,
        context: MiddlewareContext[mt.GetPromptRequestParams],
        call_next: CallNext[mt.GetPromptRequestParams, PromptResult],
    ) -> PromptResult:
        session = self.session_for(context)
        await self._learn(context, session, "prompts/get")
        params = await self._request(session, "prompts/get", _dump(context.message))
        if isinstance(params, Refuse):
            raise _blocked("prompts/get", params)
        message = mt.GetPromptRequestParams.model_validate(params)
        result = await call_next(context.copy(message=message))
        wire = _dump(result.to_mcp_prompt_result())
        return _prompt_result(await self._response(session, "prompts/get", wire))

    async def on_read_resource(
        self,
        context: MiddlewareContext[mt.ReadResourceRequestParams],
        call_next: CallNext[mt.ReadResourceRequestParams, ResourceResult],
    ) -> ResourceResult:
        session = self.session_for(context)
        await self._learn(context, session, "resources/read")
        params = await self._request(session, "resources/read", _dump(context.message))
        if isinstance(params, Refuse):
            raise _blocked("resources/read", params)
        message = mt.ReadResourceRequestParams.model_validate(params)
        result = await call_next(context.copy(message=message))
        wire = _dump(result.to_mcp_result(str(message.uri)))
        return _resource_result(await self._response(session, "resources/read", wire))

    async def on_list_tools(
        self,
        context: MiddlewareContext[mt.ListToolsRequest],
        call_next: CallNext[mt.ListToolsRequest, Sequence[Tool]],
    ) -> Sequence[Tool]:
        return await self._list(context, call_next)

    async def on_list_prompts(
        self,
        context: MiddlewareContext[mt.ListPromptsRequest],
        call_next: CallNext[mt.ListPromptsRequest, Sequence[Prompt]],
    ) -> Sequence[Prompt]:
        return await self._list(context, call_next)

    async def on_list_resources(
        self,
        context: MiddlewareContext[mt.ListResourcesRequest],
        call_next: CallNext[mt.ListResourcesRequest, Sequence[Resource]],
    ) -> Sequence[Resource]:
        return await self._list(context, call_next)

    async def on_list_resource_templates(
        self,
        context: MiddlewareContext[mt.ListResourceTemplatesRequest],
        call_next: CallNext[mt.ListResourceTemplatesRequest, Sequence[ResourceTemplate]],
    ) -> Sequence[ResourceTemplate]:
        return await self._list(context, call_next)

    # every other request, and notifications

    async def on_request(
        self,
        context: MiddlewareContext[mt.Request[Any, Any]],
        call_next: CallNext[mt.Request[Any, Any], Any],
    ) -> Any:
        method = context.method or ""
        if method in _TYPED or method in SKIPPED_METHODS:
            return await call_next(context)
        session = self.session_for(context)
        before = _params_of(context.message)
        params = await self._request(session, method, before)
        if isinstance(params, Refuse):
            raise _blocked(method, params)
        forwarded = _with_params(context, method, before, params)
        result = await call_next(forwarded)
        wire = _dump(result) if isinstance(result, BaseModel) else dict(result or {})
        return await self._response(session, method, wire)

    async def on_notification(
        self,
        context: MiddlewareContext[mt.Notification[Any, Any]],
        call_next: CallNext[mt.Notification[Any, Any], Any],
    ) -> Any:
        method = context.method or ""
        if method in SKIPPED_METHODS:
            return await call_next(context)
        before = _params_of(context.message)
        note = await self.session_for(context).notification(
            method, before, origin="client", server=self.server_name
        )
        if isinstance(note, Refuse):
            return None  # a refused notification is dropped, as in the gateway
        return await call_next(_with_params(context, method, before, note.payload))

    # the core, in wire form

    async def _request(
        self, session: InterceptionSession, method: str, params: dict[str, Any] | None
    ) -> dict[str, Any] | Refuse:
        outcome = await session.client_request(method, params, server=self.server_name)
        if isinstance(outcome, Refuse):
            return outcome
        payload: dict[str, Any] = outcome.payload or {}
        return payload

    async def _response(
        self, session: InterceptionSession, method: str, result: dict[str, Any]
    ) -> dict[str, Any]:
        """The result the client may see: a result-style block is one; an error block raises."""
        answer = await session.client_response(method, result, server=self.server_name)
        return _refused(method, answer) if isinstance(answer, Refuse) else _payload(answer)

    async def _list(
        self, context: MiddlewareContext[Any], call_next: CallNext[Any, Sequence[Any]]
    ) -> list[Any]:
        """A list through the chain: elements it removed are gone (and then refused by the
        core when used), elements it changed are rebuilt, anything else fails closed."""
        method = context.method or ""
        listing = _LISTINGS[method]
        session = self.session_for(context)
        raw = getattr(context.message, "params", None)
        params = await self._request(session, method, _dump(raw) if raw is not None else None)
        if isinstance(params, Refuse):
            raise _blocked(method, params)
        items = list(await call_next(context))
        wire = [_dump(listing.wire(item)) for item in items]
        answer = await self._response(session, method, {listing.key: wire})
        try:
            return _rebuilt(items, wire, answer.get(listing.key), listing.ident)
        except _Unrepresentable as why:
            data = {"reason": str(why)}
            refusal = Refusal(INTERNAL_ERROR, "Interceptor chain failed", data, False)
            raise PolicyBlocked(method, refusal, None) from None

    async def _learn(
        self, context: MiddlewareContext[Any], session: InterceptionSession, call: str
    ) -> None:
        """Run the whole list through the chain first when a policy filters it and this
        connection has not seen it (FastMCP's stateless clients open one per request), so
        what the list hides cannot be used by a client that never listed it."""
        method = _LEARN[call]
        if context.fastmcp_context is None or not session.needs_listing(method, self.server_name):
            return
        listing = _LISTINGS[method]
        items = await listing.everything(context.fastmcp_context.fastmcp)
        wire = [_dump(listing.wire(item)) for item in items]
        outcome = await session.client_response(
            method, {listing.key: wire}, server=self.server_name
        )
        mark_listed(session, method, self.server_name, outcome, complete=True)


def _connection(fastmcp_context: Any) -> Any:
    """The object that lives as long as the client's connection, or ``None`` outside one."""
    if fastmcp_context is None:
        return None
    try:
        session = fastmcp_context.session
    except RuntimeError:  # no request context (a programmatic call)
        return None
    return getattr(session, "_connection", session)


def _params_of(message: Any) -> dict[str, Any] | None:
    """The params of a message FastMCP's outer pass gives as the raw params mapping,
    or (called directly) as a typed request or notification."""
    if isinstance(message, Mapping):
        return dict(message)
    raw = getattr(message, "params", None)
    return _dump(raw) if raw is not None else None


def _with_params(
    context: MiddlewareContext[Any], method: str, before: Any, after: Any
) -> MiddlewareContext[Any]:
    """``context`` carrying the chain's params, in the form its message came in."""
    if after == before:
        return context
    message = context.message
    if isinstance(message, Mapping):
        return context.copy(message=dict(after or {}))
    rebuilt = type(message).model_validate({"method": method, "params": after}, by_name=False)
    return context.copy(message=rebuilt)


def _dump(model: Any) -> dict[str, Any]:
    if isinstance(model, BaseModel):
        dumped: dict[str, Any] = model.model_dump(by_alias=True, mode="json", exclude_none=True)
        return dumped
    return dict(model)


def _payload(outcome: Forward) -> dict[str, Any]:
    payload = outcome.payload
    return dict(payload) if isinstance(payload, dict) else {}


def _blocked(method: str, refusal: Refuse) -> PolicyBlocked:
    return PolicyBlocked(method, refusal.refusal, refusal.run)


def _refused(method: str, refusal: Refuse) -> dict[str, Any]:
    """A block result is the answer; a block error is raised, as in the ``mcp`` middleware."""
    if refusal.as_result:
        return refusal.refusal.to_result()
    raise _blocked(method, refusal)


def _as_call_result(result: ToolResult) -> Any:
    """A ``ToolResult`` in the wire form FastMCP itself would send."""
    converted = result.to_mcp_result()
    if isinstance(converted, mt.CallToolResult):
        return converted
    if isinstance(converted, tuple):
        content, structured = converted
        return mt.CallToolResult(content=content, structured_content=structured)
    return mt.CallToolResult(content=converted)


def _tool_result(wire: dict[str, Any]) -> ToolResult:
    return ToolResult.from_mcp_result(mt.CallToolResult.model_validate(wire))


def _prompt_result(wire: dict[str, Any]) -> PromptResult:
    result = mt.GetPromptResult.model_validate(wire)
    messages = [Message(message.content, role=message.role) for message in result.messages]
    return PromptResult(messages, description=result.description, meta=result.meta)


def _resource_result(wire: dict[str, Any]) -> ResourceResult:
    result = mt.ReadResourceResult.model_validate(wire)
    contents: list[ResourceContent] = []
    for item in result.contents:
        if isinstance(item, mt.BlobResourceContents):
            data: str | bytes = base64.b64decode(item.blob)
        else:
            data = item.text
        contents.append(ResourceContent(data, mime_type=item.mime_type, meta=item.meta))
    return ResourceResult(contents, meta=result.meta)


def _rebuilt(items: list[Any], before: list[dict[str, Any]], after: Any, ident: str) -> list[Any]:
    """The FastMCP elements that stand for the chain's list ``after``."""
    if not isinstance(after, list):
        raise _Unrepresentable("the policy replaced the list with something else")
    originals = {wire.get(ident): (item, wire) for item, wire in zip(items, before, strict=True)}
    kept: list[Any] = []
    for element in after:
        found = originals.get(element.get(ident)) if isinstance(element, dict) else None
        if found is None:
            raise _Unrepresentable("the policy added or renamed a list element")
        item, wire = found
        kept.append(item if element == wire else _edited(item, wire, element))
    return kept


def _edited(item: Any, before: dict[str, Any], after: dict[str, Any]) -> Any:
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    if not changed <= _EDITABLE.keys():
        raise _Unrepresentable(f"the policy changed {sorted(changed - _EDITABLE.keys())}")
    return item.model_copy(update={_EDITABLE[k]: after.get(k) for k in changed})

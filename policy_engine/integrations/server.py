"""Policies in front of an ``mcp`` server, through its (provisional) ``Server.middleware`` seam.

The middleware acts for the server: a request is *received* (validate, then
mutate) before the handler sees it, and its result is *sent* (mutate, then
validate) before it leaves. Everything else (skipped methods, blocks, filtered
lists and hidden tools) is the interception core's, as in the gateway.

With ``expose_interceptors=True`` the same server also answers the SEP's
``interceptors/list`` and ``interceptor/invoke`` from the chain it runs,
through the interceptor server's own handlers (``policyc serve``'s).
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.server import Server
from pydantic import BaseModel

from policy_engine.chain import ChainProvider, InterceptorChain, Selector, ServerSpec
from policy_engine.interception import (
    LISTS,
    BlockStyle,
    ChainRun,
    Interception,
    InterceptionSession,
    Refuse,
)
from policy_engine.server import InterceptorService, add_interceptor_methods, static_source
from policy_engine.wire import InterceptorOverrides, PolicycError, Principal
from policy_engine.wire.constants import SKIPPED_METHODS

from .blocked import PolicyBlocked
from .chain import Providers, local_chain, providers_of
from .listing import mark_listed

Identify = Callable[[ServerRequestContext[Any, Any]], Principal | None]
"""Who is asking, per call: e.g. from the HTTP request's verified token."""


class PolicyMiddleware:
    """A ``ServerMiddleware``: each inbound message through the chain, a session per connection."""

    def __init__(
        self,
        interception: Interception,
        *,
        principal: Principal | Identify | None = None,
        server_name: str | None = None,
    ) -> None:
        if interception.acts_for != "server":
            raise ValueError("a server's middleware acts for the server (acts_for='server')")
        self.interception = interception
        self.principal = principal
        self.server_name = server_name
        self._sessions: weakref.WeakKeyDictionary[Any, InterceptionSession] = (
            weakref.WeakKeyDictionary()
        )
        self._ids = itertools.count(1)

    def session_for(self, ctx: ServerRequestContext[Any, Any]) -> InterceptionSession:
        """This connection's interception session (what its lists hid), as this call's principal."""
        # The SDK keeps the connection private on the session; it outlives every request.
        connection = getattr(ctx.session, "_connection", ctx.session)
        session = self._sessions.get(connection)
        if session is None:
            session_id = getattr(connection, "session_id", None) or f"conn-{next(self._ids)}"
            session = InterceptionSession(self.interception, session_id=session_id)
            self._sessions[connection] = session
        principal = self.principal(ctx) if callable(self.principal) else self.principal
        return session.bound(principal=principal) if principal is not None else session

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        method = ctx.method
        if method in SKIPPED_METHODS:
            return await call_next(ctx)
        session = self.session_for(ctx)
        params = dict(ctx.params) if ctx.params is not None else None
        if ctx.request_id is None:
            note = await session.notification(
                method, params, origin="client", server=self.server_name
            )
            if isinstance(note, Refuse):
                return None
            return await call_next(replace(ctx, params=note.payload))
        await self._learn(ctx, call_next, session)
        outcome = await session.client_request(method, params, server=self.server_name)
        if isinstance(outcome, Refuse):
            return _refused(method, outcome)
        result = _as_dict(await call_next(replace(ctx, params=outcome.payload)))
        answer = await session.client_response(method, result, server=self.server_name)
        if isinstance(answer, Refuse):
            return _refused(method, answer)
        payload: dict[str, Any] = answer.payload
        return payload

    async def _learn(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext, session: InterceptionSession
    ) -> None:
        """List through the chain first when a policy filters the list a call must respect
        and this connection has not listed it (a client that skips the list, or the
        2026-07-28 protocol's connection per request): what it hides stays refused."""
        listing = _LEARN.get(ctx.method)
        if listing is None or not session.needs_listing(listing, self.server_name):
            return
        key = LISTS[listing].key
        # The call's `_meta` rides along: the 2026-07-28 protocol carries per-request
        # metadata there that the server validates on every request.
        meta = (ctx.params or {}).get("_meta")
        base: dict[str, Any] = {"_meta": meta} if meta is not None else {}
        items: list[Any] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            params = {**base, "cursor": cursor} if cursor else base
            page = _as_dict(await call_next(replace(ctx, method=listing, params=params or None)))
            items.extend(page.get(key) or [])
            cursor = page.get("nextCursor")
            if not isinstance(cursor, str):
                break
        outcome = await session.client_response(listing, {key: items}, server=self.server_name)
        complete = not isinstance(cursor, str)
        mark_listed(session, listing, self.server_name, outcome, complete=complete)


_LEARN = {
    "tools/call": "tools/list",
    "prompts/get": "prompts/list",
    "resources/read": "resources/list",
}
_MAX_PAGES = 100
"""A server that pages forever is listed this far (what it hid on later pages is not known)."""


def _as_dict(result: HandlerResult) -> dict[str, Any]:
    if result is None:
        return {}
    if isinstance(result, BaseModel):
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dict(result)


def _refused(method: str, refusal: Refuse) -> dict[str, Any]:
    """A block result is the answer; a block error leaves as the JSON-RPC error,
    raised as `PolicyBlocked` so outer middleware and logs read who refused and why."""
    if refusal.as_result:
        return refusal.refusal.to_result()
    raise PolicyBlocked(method, refusal.refusal, refusal.run)


class UnsupportedServer(PolicycError, TypeError):
    """``install_policies`` was given something other than an mcp ``Server`` or ``MCPServer``."""


def _middleware_list(server: Any) -> list[Any]:
    """The SDK's middleware seam of ``server``, refused at once for any other server.

    A list named ``middleware`` is not enough: fastmcp's ``FastMCP`` has one
    too, of its own middleware type, and a `PolicyMiddleware` appended there
    made every call fail with "Internal server error".
    """
    from mcp.server.mcpserver import MCPServer

    if isinstance(server, Server | MCPServer):
        return server.middleware
    kind = f"{type(server).__module__}.{type(server).__qualname__}"
    raise UnsupportedServer(
        f"install_policies needs an mcp 2.x `Server` or `MCPServer`, not {kind}: "
        + (
            "fastmcp's `middleware` list takes fastmcp middleware: use "
            "`server.add_middleware(FastMCPPolicyMiddleware(policies))` from "
            "`policy_engine.integrations.fastmcp` (pip install 'policyc[fastmcp]'). "
            if type(server).__module__.split(".")[0] == "fastmcp"
            else ""
        )
        + "Build the server with `mcp.server.mcpserver.MCPServer`, or put "
        "`policyc gateway` in front of it (docs/integrations.md)."
    )


def _handler_table(server: Any) -> Server[Any]:
    """The SDK server that dispatches methods: ``server``, or the one an ``MCPServer`` wraps.

    ``MCPServer`` takes custom methods only from extensions given to its
    constructor; once built, its (private) low-level server is the only way in.
    """
    if isinstance(server, Server):
        return server
    inner = getattr(server, "_lowlevel_server", None)
    if isinstance(inner, Server):
        return inner
    raise TypeError(f"cannot add methods to {type(server).__name__} (an mcp 2.x server?)")


def _expose(server: Any, chain: InterceptorChain) -> Callable[[], None]:
    """Serve the chain's interceptors with the SEP methods; returns how to withdraw them."""
    service = InterceptorService(static_source(ChainProvider(chain)))
    return add_interceptor_methods(_handler_table(server), service)


def install_policies(
    server: Any,
    policies: Providers,
    *,
    block_style: BlockStyle = "error",
    principal: Principal | Identify | None = None,
    overrides: Mapping[Selector, InterceptorOverrides] | None = None,
    chain_timeout_ms: int | None = None,
    observer: Callable[[ChainRun], None] | None = None,
    expose_interceptors: bool = False,
) -> PolicyMiddleware:
    """Put local policies (one ``PolicySet`` or several) in front of ``server``.

    ``server`` is a low-level ``Server`` or an ``MCPServer``. The middleware
    goes last on ``server.middleware``, inside the SDK's own (telemetry,
    request-state sealing), so policies see what the handler sees. With
    ``expose_interceptors`` the server also answers ``interceptors/list`` and
    ``interceptor/invoke`` (docs/integrations.md says when that is wise).
    """
    stack = _middleware_list(server)
    chain = local_chain(policies, overrides=overrides)
    middleware = _middleware(chain, block_style, chain_timeout_ms, observer, principal)
    if expose_interceptors:
        _expose(server, chain)
    stack.append(middleware)
    return middleware


def _middleware(
    chain: InterceptorChain,
    block_style: BlockStyle,
    chain_timeout_ms: int | None,
    observer: Callable[[ChainRun], None] | None,
    principal: Principal | Identify | None,
) -> PolicyMiddleware:
    """The middleware over ``chain``, acting for the server."""
    interception = Interception(
        chain,
        acts_for="server",
        block_style=block_style,
        chain_timeout_ms=chain_timeout_ms,
        observer=observer,
    )
    return PolicyMiddleware(interception, principal=principal)


@asynccontextmanager
async def open_policies(
    server: Any,
    policies: Providers = (),
    *,
    interceptors: Sequence[ServerSpec | str] = (),
    block_style: BlockStyle = "error",
    principal: Principal | Identify | None = None,
    overrides: Mapping[Selector, InterceptorOverrides] | None = None,
    chain_timeout_ms: int | None = None,
    interceptor_timeout_ms: int | None = None,
    observer: Callable[[ChainRun], None] | None = None,
    expose_interceptors: bool = False,
) -> AsyncIterator[PolicyMiddleware]:
    """Like :func:`install_policies`, with remote interceptor servers kept open for the block.

    Exposed methods are withdrawn with the middleware when the block ends.
    """
    stack = _middleware_list(server)
    async with InterceptorChain.connect(
        local=providers_of(policies),
        servers=interceptors,
        overrides=overrides,
        default_timeout_ms=interceptor_timeout_ms,
    ) as chain:
        middleware = _middleware(chain, block_style, chain_timeout_ms, observer, principal)
        withdraw = _expose(server, chain) if expose_interceptors else None
        stack.append(middleware)
        try:
            yield middleware
        finally:
            stack.remove(middleware)
            if withdraw is not None:
                withdraw()

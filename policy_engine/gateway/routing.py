"""Where a client request goes: the method to the backend that serves it (by a
federated tool's or prompt's name, a resource's URI), through the chain both ways.

With one backend every request goes to it; with several, lists are merged
(:mod:`listing`) and a call finds its backend by what the merged list said.
"""

from __future__ import annotations

from typing import Any

from mcp_types import ErrorData

from policy_engine.interception import LISTS, InterceptionSession, Refuse
from policy_engine.observability.tracing import active as active_tracing
from policy_engine.observability.tracing import with_traceparent
from policy_engine.server import LIST_METHOD, InterceptorService
from policy_engine.wire import InterceptorError
from policy_engine.wire.constants import INVOKE_METHODS, method_label
from policy_engine.wire.errors import INVALID_PARAMS, INVALID_REQUEST

from .backend import Backend
from .federation import NAMED_LISTS, URI_LISTS, Routes
from .lifecycle import SessionBackends
from .listing import Listings
from .reply import Reply, refused_reply
from .scope import SCOPE

_CALL_LISTS = {kind.call: (method, kind.key) for method, kind in LISTS.items()}


class Router:
    """Routes one session's client requests to its backends through the chain."""

    def __init__(
        self,
        backends: SessionBackends,
        chain: InterceptionSession,
        service: InterceptorService | None,
        rootless: set[str],
    ):
        self._backends = backends
        self._chain = chain
        self._service = service
        self._rootless = rootless
        self.routes = Routes()
        self._listings = Listings(backends.order, self.routes, self.call)

    def current_chain(self) -> InterceptionSession:
        """The chain of the caller whose request is running (a shared front's view)."""
        scope = SCOPE.get()
        return scope.chain if scope is not None else self._chain

    async def handle(self, method: str, params: dict[str, Any] | None) -> Reply:
        service = self._service
        if service is not None and method == LIST_METHOD:
            return Reply(result=service.list(params))
        if service is not None and method in INVOKE_METHODS:
            return Reply(result=await service.invoke(params))
        if self._backends.federated:
            if method in NAMED_LISTS or method in URI_LISTS:
                return await self._listings.federated_list(method)
            if method in ("logging/setLevel", "ping"):
                replies = [await self.call(b, method, params) for b in self._backends.order]
                return next((r for r in replies if r.error is None), replies[0])
            backend, params = await self._route(method, params)
        else:
            backend = self._backends.order[0]
        return await self.call(backend, method, params)

    async def call(self, backend: Backend, method: str, params: dict[str, Any] | None) -> Reply:
        chain = self.current_chain()
        if backend.name in self._rootless:
            return Reply(error=_needs_roots(backend.name))
        listing = _CALL_LISTS.get(method)
        if listing is not None and chain.needs_listing(listing[0], backend.name):
            refused = await self._listings.learn_once(chain, backend, *listing)
            if refused is not None:
                return refused
        outcome = await chain.client_request(method, params, server=backend.name)
        if isinstance(outcome, Refuse):
            return refused_reply(outcome)
        result = await self._forward(backend, method, outcome.payload)
        answer = await chain.client_response(method, result, server=backend.name, request=params)
        if isinstance(answer, Refuse):
            return refused_reply(answer)
        return Reply(result=answer.payload)

    async def _forward(self, backend: Backend, method: str, params: Any) -> Any:
        """Send a request the chain let through; traced, under a ``backend <method>``
        client span whose ``traceparent`` the backend receives in ``_meta``."""
        tracing = active_tracing()
        if tracing is None:
            return await self._backends.request(backend, method, params)
        known = method_label(method)
        attributes = {"rpc.method": known, "policyc.server": backend.name}
        with tracing.outgoing(f"backend {known}", attributes) as span:
            sent = with_traceparent(params, span)
            return await self._backends.request(backend, method, sent)

    async def _route(
        self, method: str, params: dict[str, Any] | None
    ) -> tuple[Backend, dict[str, Any] | None]:
        body = params or {}
        if method in ("tools/call", "prompts/get"):
            return await self._by_name(method, body, "name")
        if method.startswith("resources/") and isinstance(body.get("uri"), str):
            if not self.routes.resources:
                await self._listings.federated_list("resources/list")
            owner = self.routes.resources.get(body["uri"])
            return (self._backends.by_name[owner] if owner else self._backends.order[0]), params
        if method == "completion/complete":
            ref = body.get("ref") or {}
            if ref.get("type") == "ref/prompt" and isinstance(ref.get("name"), str):
                backend, original = await self._lookup("prompts/get", ref["name"])
                return backend, {**body, "ref": {**ref, "name": original}}
            if isinstance(ref.get("uri"), str):
                owner = self.routes.resources.get(ref["uri"])
                return (self._backends.by_name[owner] if owner else self._backends.order[0]), params
        return self._backends.order[0], params

    async def _by_name(
        self, method: str, body: dict[str, Any], key: str
    ) -> tuple[Backend, dict[str, Any]]:
        name = body.get(key)
        if not isinstance(name, str):
            raise InterceptorError(INVALID_PARAMS, "Invalid params", {"reason": f"missing {key}"})
        backend, original = await self._lookup(method, name)
        return backend, {**body, key: original}

    async def _lookup(self, method: str, name: str) -> tuple[Backend, str]:
        table = self.routes.table(method)
        if name not in table:
            await self._listings.federated_list(
                "tools/list" if method.startswith("tools/") else "prompts/list"
            )
        if name not in table:
            noun = "tool" if method.startswith("tools/") else "prompt"
            raise InterceptorError(
                INVALID_PARAMS, f"Unknown {noun}", {"reason": f"no backend offers this {noun}"}
            )
        owner, original = table[name]
        return self._backends.by_name[owner], original


def _needs_roots(server: str) -> ErrorData:
    reason = (
        "this backend asks for the client's roots, which a gateway without a session "
        "stream (--stateless) cannot give it; serve it from a stateful gateway"
    )
    data = {"reason": reason, "server": server}
    return ErrorData(code=INVALID_REQUEST, message="Backend needs roots", data=data)

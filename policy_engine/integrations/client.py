"""Policies around the SDK's ``Client``: the application's own calls, and what the server asks.

The wrapper acts for the client: a request is *sent* (mutate, then validate)
and its result *received* (validate, then mutate). For a request the server
sends (sampling, elicitation, roots) the roles swap, as the core says. A
refused call never leaves the process: :class:`PolicyBlocked` is raised.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, NoReturn, TypeVar

from mcp.client import Client
from mcp_types import (
    CallToolResult,
    CreateMessageRequestParams,
    ElicitRequestParams,
    ElicitResult,
    ErrorData,
    GetPromptResult,
    ListPromptsResult,
    ListResourcesResult,
    ListRootsResult,
    ListToolsResult,
    ReadResourceResult,
)
from pydantic import BaseModel

from policy_engine.chain import Selector
from policy_engine.interception import (
    BlockStyle,
    ChainRun,
    Interception,
    InterceptionSession,
    Refuse,
)
from policy_engine.wire import (
    ChainExecutionResult,
    InterceptorError,
    InterceptorOverrides,
    Principal,
)

from .chain import Providers, local_chain

_M = TypeVar("_M", bound=BaseModel)


class PolicyBlocked(Exception):
    """A call or its result refused by policy; ``run`` is the failed chain run, if a chain ran."""

    def __init__(self, method: str, error: InterceptorError, run: ChainExecutionResult | None):
        super().__init__(f"{method}: {error.message}")
        self.method = method
        self.error = error
        self.run = run


def _dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def _raise(method: str, refusal: Refuse) -> NoReturn:
    error = refusal.error
    if error is None:  # a result-style block: the SEP error rides in its _meta
        error = InterceptorError(-32602, "Interceptor validation failed")
    raise PolicyBlocked(method, error, refusal.run)


def _error_data(refusal: Refuse) -> ErrorData:
    error = refusal.error or InterceptorError(-32602, "Interceptor validation failed")
    return ErrorData(code=error.code, message=error.message, data=error.data)


class PolicyClient:
    """Policies for one client connection: wrap the callbacks, then :meth:`bind` the ``Client``."""

    def __init__(
        self,
        policies: Providers,
        *,
        principal: Principal | None = None,
        session_id: str | None = None,
        server_name: str | None = None,
        block_style: BlockStyle = "error",
        overrides: Mapping[Selector, InterceptorOverrides] | None = None,
        chain_timeout_ms: int | None = None,
        observer: Callable[[ChainRun], None] | None = None,
        interception: Interception | None = None,
    ) -> None:
        core = interception or Interception(
            local_chain(policies, overrides=overrides),
            acts_for="client",
            block_style=block_style,
            chain_timeout_ms=chain_timeout_ms,
            observer=observer,
        )
        if core.acts_for != "client":
            raise ValueError("a client's policies act for the client (acts_for='client')")
        self.session = InterceptionSession(core, session_id=session_id, principal=principal)
        self.server_name = server_name
        self._client: Client | None = None

    def bind(self, client: Client) -> PolicyClient:
        """Use this (entered) ``Client`` for the calls."""
        self._client = client
        return self

    @property
    def client(self) -> Client:
        if self._client is None:
            raise RuntimeError("PolicyClient.bind(client) first")
        return self._client

    async def _request(
        self, method: str, params: dict[str, Any], principal: Principal | None
    ) -> tuple[InterceptionSession, dict[str, Any]]:
        session = self.session.bound(principal=principal) if principal else self.session
        outcome = await session.client_request(method, params, server=self.server_name)
        if isinstance(outcome, Refuse):
            _raise(method, outcome)
        payload: dict[str, Any] = outcome.payload or {}
        return session, payload

    async def _result(
        self, session: InterceptionSession, method: str, result: BaseModel, model: type[_M]
    ) -> _M:
        outcome = await session.client_response(method, _dump(result), server=self.server_name)
        if isinstance(outcome, Refuse):
            _raise(method, outcome)
        return model.model_validate(outcome.payload, by_name=False)

    # the application's calls

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        principal: Principal | None = None,
        **options: Any,
    ) -> CallToolResult:
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        session, sent = await self._request("tools/call", params, principal)
        if session.core.block_style == "result" and sent.get("isError") is True:
            return CallToolResult.model_validate(sent, by_name=False)
        result = await self.client.call_tool(sent["name"], sent.get("arguments"), **options)
        return await self._result(session, "tools/call", result, CallToolResult)

    async def list_tools(self, *, principal: Principal | None = None) -> ListToolsResult:
        session, _ = await self._request("tools/list", {}, principal)
        return await self._result(
            session, "tools/list", await self.client.list_tools(), ListToolsResult
        )

    async def list_prompts(self, *, principal: Principal | None = None) -> ListPromptsResult:
        session, _ = await self._request("prompts/list", {}, principal)
        return await self._result(
            session, "prompts/list", await self.client.list_prompts(), ListPromptsResult
        )

    async def list_resources(self, *, principal: Principal | None = None) -> ListResourcesResult:
        session, _ = await self._request("resources/list", {}, principal)
        return await self._result(
            session, "resources/list", await self.client.list_resources(), ListResourcesResult
        )

    async def get_prompt(
        self,
        name: str,
        arguments: dict[str, str] | None = None,
        *,
        principal: Principal | None = None,
    ) -> GetPromptResult:
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        session, sent = await self._request("prompts/get", params, principal)
        result = await self.client.get_prompt(sent["name"], sent.get("arguments"))
        return await self._result(session, "prompts/get", result, GetPromptResult)

    async def read_resource(
        self, uri: str, *, principal: Principal | None = None
    ) -> ReadResourceResult:
        session, sent = await self._request("resources/read", {"uri": uri}, principal)
        result = await self.client.read_resource(sent["uri"])
        return await self._result(session, "resources/read", result, ReadResourceResult)

    # what the server asks of the client (2025-era requests)

    async def _server_request(
        self,
        method: str,
        params: BaseModel | None,
        model: type[_M],
        answer: Callable[[_M], Awaitable[BaseModel | ErrorData]],
    ) -> Any:
        body = _dump(params) if params is not None else {}
        outcome = await self.session.server_request(method, body, server=self.server_name)
        if isinstance(outcome, Refuse):
            return _error_data(outcome)
        reply = await answer(model.model_validate(outcome.payload or {}, by_name=False))
        if isinstance(reply, ErrorData):
            return reply
        checked = await self.session.server_response(method, _dump(reply), server=self.server_name)
        if isinstance(checked, Refuse):
            return _error_data(checked)
        return type(reply).model_validate(checked.payload, by_name=False)

    def sampling(self, callback: Callable[[Any, Any], Awaitable[Any]]) -> Any:
        """A ``sampling_callback`` for ``Client`` that runs the chain around ``callback``."""

        async def guarded(context: Any, params: CreateMessageRequestParams) -> Any:
            return await self._server_request(
                "sampling/createMessage",
                params,
                CreateMessageRequestParams,
                lambda checked: callback(context, checked),
            )

        return guarded

    def elicitation(
        self, callback: Callable[[Any, Any], Awaitable[ElicitResult | ErrorData]]
    ) -> Any:
        """An ``elicitation_callback`` for ``Client`` that runs the chain around ``callback``."""

        async def guarded(context: Any, params: ElicitRequestParams) -> Any:
            return await self._server_request(
                "elicitation/create",
                params,
                ElicitRequestParams,  # type: ignore[arg-type]
                lambda checked: callback(context, checked),
            )

        return guarded

    def roots(self, callback: Callable[[Any], Awaitable[ListRootsResult | ErrorData]]) -> Any:
        """A ``list_roots_callback`` for ``Client`` that runs the chain around ``callback``."""

        async def guarded(context: Any) -> Any:
            return await self._server_request(
                "roots/list", None, _Empty, lambda _checked: callback(context)
            )

        return guarded


class _Empty(BaseModel):
    model_config = {"extra": "allow"}

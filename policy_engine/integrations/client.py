"""Policies around the SDK's ``Client``: the application's own calls, and what the server asks.

The wrapper acts for the client: a request is *sent* (mutate, then validate)
and its result *received* (validate, then mutate). For a request the server
sends (sampling, elicitation, roots) the roles swap, as the core says. A
refused call never leaves the process: :class:`PolicyBlocked` is raised.

On a 2026-07-28 session the server asks inside a result (``InputRequiredResult``):
the wrapper drives those rounds itself, so that the whole result runs through
the core (each input request under its own event) before any callback sees it,
and each retried request, with its ``inputResponses``, runs through the core
before it is sent. ``requestState`` passes through untouched.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, NoReturn, TypeVar

from mcp.client import Client

# The SDK's own SEP-2322 round driver (rounds cap, state-only backoff, concurrent
# dispatch): reused so the wrapper's rounds behave exactly like the SDK's.
from mcp.client._input_required import run_input_required_driver
from mcp.client.session import ClientRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import (
    HEADER_MISMATCH,
    CallToolResult,
    CreateMessageRequestParams,
    ElicitRequestParams,
    ElicitResult,
    ErrorData,
    GetPromptResult,
    InputRequest,
    InputRequiredResult,
    InputResponse,
    InputResponses,
    ListPromptsResult,
    ListResourcesResult,
    ListRootsResult,
    ListToolsResult,
    ReadResourceResult,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel

from policy_engine.chain import Selector
from policy_engine.interception import (
    LISTS,
    BlockStyle,
    ChainRun,
    Interception,
    InterceptionSession,
    Refuse,
)
from policy_engine.wire import (
    InterceptorOverrides,
    Principal,
)

from .blocked import PolicyBlocked
from .chain import Providers, local_chain
from .listing import mark_listed

_M = TypeVar("_M", bound=BaseModel)


def _dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def _raise(method: str, refusal: Refuse) -> NoReturn:
    # The caller gets the exception whichever block form the policy chose.
    raise PolicyBlocked(method, refusal.refusal, refusal.run)


def _error_data(refusal: Refuse) -> ErrorData:
    """A refused server request's answer to the server: the refusal's JSON-RPC error."""
    wire = refusal.refusal
    return ErrorData(code=wire.code, message=wire.message, data=wire.to_error_data())


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

    def _session_for(self, principal: Principal | None) -> InterceptionSession:
        return self.session.bound(principal=principal) if principal else self.session

    async def _request(
        self, method: str, params: dict[str, Any], principal: Principal | None
    ) -> tuple[InterceptionSession, dict[str, Any]]:
        session = self._session_for(principal)
        return session, await self._sent(session, method, params)

    async def _sent(
        self, session: InterceptionSession, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        outcome = await session.client_request(method, params, server=self.server_name)
        if isinstance(outcome, Refuse):
            _raise(method, outcome)
        payload: dict[str, Any] = outcome.payload or {}
        return payload

    async def _result(
        self, session: InterceptionSession, method: str, result: BaseModel, model: type[_M]
    ) -> _M:
        outcome = await session.client_response(method, _dump(result), server=self.server_name)
        if isinstance(outcome, Refuse):
            _raise(method, outcome)
        return model.model_validate(outcome.payload, by_name=False)

    async def _interactive(
        self,
        method: str,
        params: dict[str, Any],
        principal: Principal | None,
        send: _Send,
        model: type[_M],
        input_responses: InputResponses | None,
        request_state: str | None,
    ) -> _M:
        """A request whose 2026-07-28 result may ask for input: every round through the core."""
        session = self._session_for(principal)
        await self._learn(session, method)

        async def retry(
            responses: InputResponses | None, state: str | None
        ) -> _M | InputRequiredResult:
            body = dict(params)
            if responses is not None:
                body["inputResponses"] = {key: _dump(value) for key, value in responses.items()}
            if state is not None:
                body["requestState"] = state
            sent = await self._sent(session, method, body)
            checked = _typed_responses(sent.get("inputResponses"), responses)
            result = await send(sent, checked, sent.get("requestState"))
            outcome = await session.client_response(method, _dump(result), server=self.server_name)
            if isinstance(outcome, Refuse):
                _raise(method, outcome)
            if isinstance(result, InputRequiredResult):
                return InputRequiredResult.model_validate(outcome.payload, by_name=False)
            return model.model_validate(outcome.payload, by_name=False)

        first = await retry(input_responses, request_state)
        if not isinstance(first, InputRequiredResult):
            return first
        return await run_input_required_driver(
            first,
            dispatch=self._answer,
            retry=retry,
            max_rounds=self.client.input_required_max_rounds,
        )

    async def _answer(self, key: str, request: InputRequest) -> InputResponse | ErrorData:
        """One checked input request, to the application's callback (its chain already ran)."""
        session = self.client.session
        params = request.params
        context = ClientRequestContext(
            session=session, request_id=key, meta=params.meta if params is not None else None
        )
        registered = getattr(self.client, _CALLBACK_FIELDS[request.method], None)
        if isinstance(registered, _Guarded) and registered.owner is self:
            answer: InputResponse | ErrorData = await registered.callback(
                context, *(() if request.method == "roots/list" else (params,))
            )
            return answer
        return await session.dispatch_input_request(context, request)

    async def _learn(self, session: InterceptionSession, method: str) -> None:
        """List through the chain first when a policy filters the list this call depends on
        and it was never listed here: what the list hides is refused though nobody listed."""
        listing = _LEARN.get(method)
        if listing is None or not session.needs_listing(listing, self.server_name):
            return
        key = LISTS[listing].key
        lister = getattr(self.client, _LISTERS[listing])
        items: list[Any] = []
        cursor: str | None = None
        for _ in range(_RELIST_PAGE_CAP):
            page = _dump(await lister(cursor=cursor))
            items.extend(page.get(key) or [])
            cursor = page.get("nextCursor")
            if not isinstance(cursor, str):
                break
        outcome = await session.client_response(listing, {key: items}, server=self.server_name)
        complete = not isinstance(cursor, str)
        mark_listed(session, listing, self.server_name, outcome, complete=complete)

    def _modern(self) -> bool:
        return self.client.protocol_version in MODERN_PROTOCOL_VERSIONS

    async def _relist(self, name: str) -> None:
        """Refresh the SDK's tool listing, page by page, until a page lists ``name``."""
        cursor: str | None = None
        for _ in range(_RELIST_PAGE_CAP):
            page = await self.client.list_tools(cursor=cursor, cache_mode="refresh")
            cursor = page.next_cursor
            if cursor is None or any(tool.name == name for tool in page.tools):
                return

    # the application's calls

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        principal: Principal | None = None,
        input_responses: InputResponses | None = None,
        request_state: str | None = None,
        **options: Any,
    ) -> CallToolResult:
        """``options`` are the SDK session's: ``read_timeout_seconds``, ``progress_callback``,
        ``meta``; ``input_responses`` and ``request_state`` resume a persisted exchange."""

        async def once(
            sent: dict[str, Any], responses: InputResponses | None, state: str | None
        ) -> CallToolResult | InputRequiredResult:
            result: CallToolResult | InputRequiredResult = await self.client.session.call_tool(
                sent["name"],
                sent.get("arguments"),
                input_responses=responses,
                request_state=state,
                allow_input_required=True,
                **options,
            )
            return result

        async def send(
            sent: dict[str, Any], responses: InputResponses | None, state: str | None
        ) -> CallToolResult | InputRequiredResult:
            try:
                return await once(sent, responses, state)
            except MCPError as mismatch:
                # As the SDK's Client does: the tool's listed schema (which says what goes
                # in Mcp-Param headers) is missing or stale, so re-list and resend once.
                if mismatch.code != HEADER_MISMATCH or not self._modern():
                    raise
                await self._relist(sent["name"])
                return await once(sent, responses, state)

        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        return await self._interactive(
            "tools/call", params, principal, send, CallToolResult, input_responses, request_state
        )

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
        input_responses: InputResponses | None = None,
        request_state: str | None = None,
    ) -> GetPromptResult:
        async def send(
            sent: dict[str, Any], responses: InputResponses | None, state: str | None
        ) -> GetPromptResult | InputRequiredResult:
            return await self.client.session.get_prompt(
                sent["name"],
                sent.get("arguments"),
                input_responses=responses,
                request_state=state,
                allow_input_required=True,
            )

        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        return await self._interactive(
            "prompts/get", params, principal, send, GetPromptResult, input_responses, request_state
        )

    async def read_resource(
        self,
        uri: str,
        *,
        principal: Principal | None = None,
        input_responses: InputResponses | None = None,
        request_state: str | None = None,
    ) -> ReadResourceResult:
        async def send(
            sent: dict[str, Any], responses: InputResponses | None, state: str | None
        ) -> ReadResourceResult | InputRequiredResult:
            return await self.client.session.read_resource(
                sent["uri"],
                input_responses=responses,
                request_state=state,
                allow_input_required=True,
            )

        return await self._interactive(
            "resources/read",
            {"uri": uri},
            principal,
            send,
            ReadResourceResult,
            input_responses,
            request_state,
        )

    # what the server asks of the client (2025-era requests)

    async def _server_request(
        self,
        method: str,
        params: BaseModel | None,
        answer: Callable[[Any], Awaitable[BaseModel | ErrorData]],
    ) -> Any:
        body = _dump(params) if params is not None else {}
        outcome = await self.session.server_request(method, body, server=self.server_name)
        if isinstance(outcome, Refuse):
            return _error_data(outcome)
        # Checked params are read back as the model the SDK gave (elicitation's is a union).
        checked_params = (
            type(params).model_validate(outcome.payload or {}, by_name=False)
            if params is not None
            else None
        )
        reply = await answer(checked_params)
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
                "sampling/createMessage", params, lambda checked: callback(context, checked)
            )

        return _Guarded(self, callback, guarded)

    def elicitation(
        self, callback: Callable[[Any, Any], Awaitable[ElicitResult | ErrorData]]
    ) -> Any:
        """An ``elicitation_callback`` for ``Client`` that runs the chain around ``callback``."""

        async def guarded(context: Any, params: ElicitRequestParams) -> Any:
            return await self._server_request(
                "elicitation/create", params, lambda checked: callback(context, checked)
            )

        return _Guarded(self, callback, guarded)

    def roots(self, callback: Callable[[Any], Awaitable[ListRootsResult | ErrorData]]) -> Any:
        """A ``list_roots_callback`` for ``Client`` that runs the chain around ``callback``."""

        async def guarded(context: Any) -> Any:
            return await self._server_request("roots/list", None, lambda _: callback(context))

        return _Guarded(self, callback, guarded)


_Send = Callable[[dict[str, Any], InputResponses | None, str | None], Awaitable[Any]]
"""Sends the checked request (its params, typed input responses, request state) once."""

_LEARN = {
    "tools/call": "tools/list",
    "prompts/get": "prompts/list",
    "resources/read": "resources/list",
}
_LISTERS = {
    "tools/list": "list_tools",
    "prompts/list": "list_prompts",
    "resources/list": "list_resources",
}
_RELIST_PAGE_CAP = 100
"""Pages walked to re-list a tool: a paginator that never ends cannot hang a call."""

_CALLBACK_FIELDS = {
    "sampling/createMessage": "sampling_callback",
    "elicitation/create": "elicitation_callback",
    "roots/list": "list_roots_callback",
}


class _Guarded:
    """A callback wrapped by :meth:`PolicyClient.sampling` and the rest.

    Called by the SDK (a 2025-era request), it runs the chain around the
    application's ``callback``; the 2026-07-28 rounds the wrapper drives have
    already run it, so they call ``callback`` directly and the chain runs once.
    """

    def __init__(
        self,
        owner: PolicyClient,
        callback: Callable[..., Awaitable[Any]],
        guarded: Callable[..., Awaitable[Any]],
    ) -> None:
        self.owner = owner
        self.callback = callback
        self._guarded = guarded

    async def __call__(self, *args: Any) -> Any:
        return await self._guarded(*args)


def _typed_responses(checked: Any, originals: InputResponses | None) -> InputResponses | None:
    """The checked input responses as the SDK's models, each of its original's type."""
    if not isinstance(checked, dict) or originals is None:
        return originals
    return {
        key: type(originals[key]).model_validate(value, by_name=False)
        for key, value in checked.items()
        if key in originals
    }

"""The MCP server object: the SDK's lowlevel ``Server`` with our two methods.

The SDK owns the protocol (both handshake eras, ping, notifications,
cancellation); this module only registers the SEP methods, advertises the
extension, and makes sure no failure leaves as the SDK's catch-all code 0.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError
from mcp_types import RequestParams
from pydantic import ConfigDict, ValidationError

from policy_engine import __version__
from policy_engine.wire import InterceptorError
from policy_engine.wire.constants import HANDSHAKE_METHODS, INVOKE_METHODS, LIST_METHOD
from policy_engine.wire.errors import INTERNAL_ERROR, METHOD_NOT_FOUND

from .catalog import EXTENSION_ID
from .decision_log import DecisionLog
from .resource_server import verified_principal
from .service import InterceptorService
from .source import ProviderSource

SERVER_NAME = "policyc"


class _RawParams(RequestParams):
    """Accept any params object: the service validates them itself, so its
    -32602 can name the bad fields (the SDK's own error data is empty)."""

    model_config = ConfigDict(extra="allow")


def _to_mcp_error(error: InterceptorError) -> MCPError:
    return MCPError(code=error.code, message=error.message, data=error.data)


class _ErrorNet:
    """Outermost middleware: an unexpected exception becomes -32603, not code 0."""

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.request_id is None:
            return await call_next(ctx)
        try:
            return await call_next(ctx)
        except (MCPError, ValidationError):
            raise
        except InterceptorError as error:
            raise _to_mcp_error(error) from None
        except Exception as exc:
            raise MCPError(
                code=INTERNAL_ERROR,
                message="Internal error",
                data={"reason": type(exc).__name__},
            ) from exc


class _AdvertiseInterceptors:
    """Adds the extension to both handshakes' capabilities, from the live provider.

    The SDK fills ``capabilities.extensions`` only on the 2026 ``server/discover``
    path; the 2025 ``initialize`` result is sieved to that revision's schema,
    which has no ``extensions``. Writing it after the sieve makes it visible on
    the legacy handshake too, and ``experimental`` is where older clients (the
    Go SDK, for one) look for it. Computing it per handshake means a reload
    changes ``supportedEvents`` for every new connection.
    """

    def __init__(self, service: InterceptorService) -> None:
        self._service = service

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method in HANDSHAKE_METHODS and isinstance(result, dict):
            settings = self._service.catalog().capability()
            capabilities = dict(result.get("capabilities") or {})
            for key in ("extensions", "experimental"):
                section = dict(capabilities.get(key) or {})
                section[EXTENSION_ID] = settings
                capabilities[key] = section
            result = {**result, "capabilities": capabilities}
        return result


class _InterceptorMethods:
    """The two methods' handlers over one service; once withdrawn they answer -32601."""

    def __init__(self, service: InterceptorService) -> None:
        self.service = service
        self.withdrawn = False

    def _serving(self, ctx: ServerRequestContext[Any, Any]) -> InterceptorService:
        if self.withdrawn:
            raise MCPError(code=METHOD_NOT_FOUND, message="Method not found", data=ctx.method)
        return self.service

    async def list(
        self, ctx: ServerRequestContext[Any, Any], _params: _RawParams
    ) -> dict[str, Any]:
        try:
            return self._serving(ctx).list(ctx.params)
        except InterceptorError as error:
            raise _to_mcp_error(error) from None

    async def invoke(
        self, ctx: ServerRequestContext[Any, Any], _params: _RawParams
    ) -> dict[str, Any]:
        try:
            principal = verified_principal(ctx)
            return await self._serving(ctx).invoke(ctx.params, principal=principal)
        except InterceptorError as error:
            raise _to_mcp_error(error) from None


def _taken(server: Server[Any], method: str) -> bool:
    """Whether ``method`` has a live handler (a withdrawn one of ours may be replaced)."""
    entry = server.get_request_handler(method)
    if entry is None:
        return False
    owner = getattr(entry.handler, "__self__", None)
    return not (isinstance(owner, _InterceptorMethods) and owner.withdrawn)


def add_interceptor_methods(server: Server[Any], service: InterceptorService) -> Callable[[], None]:
    """Answer the SEP methods on ``server`` from ``service``; advertise the extension.

    ``policyc serve`` and an application's own server (``expose_interceptors``)
    share this, so both answer alike. Returns a function that withdraws the
    methods again: afterwards they answer -32601 as if never added (the SDK
    can replace a handler but not remove one) and handshakes stop advertising.
    """
    for method in (LIST_METHOD, *sorted(INVOKE_METHODS)):
        if _taken(server, method):
            raise ValueError(f"the server already answers `{method}`")
    methods = _InterceptorMethods(service)
    server.add_request_handler(LIST_METHOD, _RawParams, methods.list)
    for method in INVOKE_METHODS:
        server.add_request_handler(method, _RawParams, methods.invoke)
    advertiser = _AdvertiseInterceptors(service)
    server.middleware.append(advertiser)

    def withdraw() -> None:
        methods.withdrawn = True
        if advertiser in server.middleware:
            server.middleware.remove(advertiser)

    return withdraw


def build_server(
    source: ProviderSource,
    decision_log: DecisionLog | None = None,
    *,
    service: InterceptorService | None = None,
) -> Server[Any]:
    """An SDK server answering the SEP methods from whatever ``source`` returns now.

    Pass ``service`` to share it (and its catalog cache) with a stdio fast lane.
    """
    if service is None:
        service = InterceptorService(source, decision_log)
    server: Server[Any] = Server(
        SERVER_NAME,
        version=__version__,
        description="policyc SEP-2624 interceptor server",
    )
    add_interceptor_methods(server, service)
    server.middleware.insert(0, _ErrorNet())
    return server

"""A gateway session's backends: starting them (at once, or lazily once the client's
handshake is done), their handshake, and what happens when one exits.

With a :class:`HandshakeCache` a session answers ``initialize`` without starting
anything and starts its backends when the client sends
``notifications/initialized``, replaying the client's handshake to them; a
request waits until its backend is ready. A backend that exits is restarted
(its handshake replayed) up to its limit, or the session stops.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup

from policy_engine.interception import Forward
from policy_engine.observability import metrics
from policy_engine.server import EXTENSION_ID
from policy_engine.wire import InterceptorError
from policy_engine.wire.constants import INITIALIZE, INITIALIZED
from policy_engine.wire.errors import INTERNAL_ERROR

from .backend import Backend, BackendError, NotificationHandler, RequestHandler, describe
from .federation import merge_handshakes
from .reply import Reply
from .scope import OpenRequests

if TYPE_CHECKING:
    from .session import SessionOptions

logger = logging.getLogger("policyc.gateway")

HANDSHAKE_TIMEOUT_S = 30.0
"""The least time a backend gets to answer its handshake: starting a server process can
take far longer than any later request is allowed."""


class BackendStartError(RuntimeError):
    """A backend could not be started or reached when the session opened."""


class SessionBackends:
    """The backends of one session and their life: start, handshake, restart."""

    def __init__(
        self,
        options: SessionOptions,
        on_request: RequestHandler,
        on_notification: NotificationHandler,
        open_requests: OpenRequests,
        stop: Callable[[str], None],
    ):
        self.options = options
        self.by_name = {
            spec.name: Backend(
                spec,
                on_request=on_request,
                on_notification=on_notification,
                on_exit=self._exited,
                errlog=options.errlog,
            )
            for spec in options.backends
        }
        self.order = list(self.by_name.values())
        self.federated = len(self.order) > 1
        self._open = open_requests
        self._stop = stop
        self._handshake: tuple[str, dict[str, Any] | None] | None = None
        self._ready: dict[str, anyio.Event] = {
            spec.name: anyio.Event() for spec in options.backends
        }
        self.started = False
        self.start_failed = False
        self.tg: TaskGroup | None = None
        self.handshake_answered = anyio.Event()

    async def connect_all(self, *, ready: bool) -> None:
        """Start every backend; ``ready``: requests may go to them at once (else only
        once the caller has replayed the client's handshake to them)."""
        assert self.tg is not None
        self.started = True
        for backend in self.order:
            try:
                await backend.connect(self.tg)
            except Exception as err:
                raise BackendStartError(
                    f"backend {backend.name} could not be started: {describe(err)}"
                ) from None
            if ready:
                self._ready[backend.name].set()

    async def start_late(self, initialized: Forward | None) -> None:
        """The lazy start: the client finished its handshake, which the backends now get
        (``initialized``: the notification as the chain passed it; ``None`` if refused)."""
        try:
            await self.connect_all(ready=False)
            method, params = self._handshake or (INITIALIZE, None)
            for backend in self.order:
                limit = max(backend.spec.timeout_s, HANDSHAKE_TIMEOUT_S)
                await backend.request(method, params, timeout_s=limit)
                if initialized is not None:
                    await backend.notify(INITIALIZED, initialized.payload)
                self._ready[backend.name].set()
        except Exception as err:
            self.start_failed = True
            logger.error("the session's backends could not be started: %s", describe(err))
            self._stop(f"backends could not be started: {describe(err)}")

    def close(self) -> None:
        for backend in self.order:
            backend.close()

    async def request(
        self,
        backend: Backend,
        method: str,
        params: dict[str, Any] | None,
        timeout_s: float | None = None,
    ) -> dict[str, Any]:
        """One request to ``backend``, once it is ready (started and handshaken)."""
        ready = self._ready[backend.name]
        if not ready.is_set():
            with anyio.move_on_after(backend.spec.timeout_s):
                await ready.wait()
        if not backend.alive:
            raise backend.unavailable("the backend is not running")
        return await backend.request(method, params, timeout_s=timeout_s)

    # the handshake

    async def open_handshake(self, params: dict[str, Any]) -> dict[str, Any]:
        """The gateway's own ``initialize`` with every backend, for a front whose clients
        share these connections; the (merged) result answers their handshakes."""
        reply = await self.handshake_with(INITIALIZE, params)
        for backend in self.order:
            await backend.notify(INITIALIZED, None)
        assert reply.result is not None
        return reply.result

    async def settle(self) -> None:
        """A ping to every backend: what a backend asks right after the handshake (its
        roots) has arrived once the answer, which comes after it, has."""
        for backend in self.order:
            try:
                await self.request(backend, "ping", None)
            except (BackendError, InterceptorError) as err:
                logger.warning("backend %s did not answer a ping: %s", backend.name, err)

    async def handshake_with(self, method: str, params: dict[str, Any] | None) -> Reply:
        if method == INITIALIZE:
            self._handshake = (method, params)
        cache = self.options.handshakes
        try:
            if cache is not None and method == INITIALIZE and not self.started:
                result = await cache.answer(params, lambda: self._learn_handshake(params))
            else:
                if not self.started:
                    await self.connect_all(ready=True)
                result = await self._backends_handshake(method, params)
        except BackendStartError as err:
            self.start_failed = True
            raise InterceptorError(
                INTERNAL_ERROR, "Backend unavailable", {"reason": str(err)}
            ) from None
        finally:
            self.handshake_answered.set()
        if self.options.expose_interceptors:
            result = _advertise(result, self.options.interceptor_capability)
        return Reply(result=result)

    async def _learn_handshake(self, params: dict[str, Any] | None) -> dict[str, Any]:
        """The first session to ask for this version starts its backends to learn it."""
        await self.connect_all(ready=True)
        return await self._backends_handshake(INITIALIZE, params)

    async def _backends_handshake(
        self, method: str, params: dict[str, Any] | None
    ) -> dict[str, Any]:
        results: dict[str, dict[str, Any]] = {}
        for backend in self.order:
            limit = max(backend.spec.timeout_s, HANDSHAKE_TIMEOUT_S)
            results[backend.name] = await self.request(backend, method, params, limit)
        return next(iter(results.values())) if not self.federated else merge_handshakes(results)

    # exits

    async def _exited(self, backend: Backend, reason: str) -> None:
        spec = backend.spec
        if spec.on_exit == "exit" or backend.restarts >= spec.max_restarts:
            why = "configured to exit" if spec.on_exit == "exit" else "too many restarts"
            logger.error(
                "backend %s exited (%s); stopping the gateway (%s)", spec.name, reason, why
            )
            # Let the requests it failed send their errors before everything stops.
            await self._open.drain(1.0)
            self._stop(f"backend {spec.name} exited: {reason}")
            return
        backend.restarts += 1
        metrics.backend_restarted(spec.name)
        logger.warning(
            "backend %s exited (%s); restarting (%d of %d)",
            spec.name,
            reason,
            backend.restarts,
            spec.max_restarts,
        )
        ready = anyio.Event()
        self._ready[spec.name] = ready
        try:
            assert self.tg is not None
            await backend.connect(self.tg)
            if self._handshake is not None:
                method, params = self._handshake
                limit = max(spec.timeout_s, HANDSHAKE_TIMEOUT_S)
                await backend.request(method, params, timeout_s=limit)
                await backend.notify(INITIALIZED, None)
            logger.warning("backend %s restarted", spec.name)
        except Exception as err:
            logger.error("backend %s could not be restarted: %s", spec.name, err)
            self._stop(f"backend {spec.name} could not be restarted")
        finally:
            ready.set()


def _advertise(result: dict[str, Any], capability: dict[str, Any]) -> dict[str, Any]:
    capabilities = dict(result.get("capabilities") or {})
    for key in ("extensions", "experimental"):
        section = dict(capabilities.get(key) or {})
        section[EXTENSION_ID] = capability
        capabilities[key] = section
    return {**result, "capabilities": capabilities}

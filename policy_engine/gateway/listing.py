"""The lists a gateway session fetches itself: a filtered list learned before the
first call it governs, and a federated list merged from every backend.

A policy that hides tools (or prompts, resources) decides a call by what the
list showed, so before a call the session lists every page of that list
through the chain, once for calls that arrive together; a listing that fails
refuses the call rather than let it through unchecked.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from policy_engine.interception import InterceptionSession
from policy_engine.wire import InterceptorError, Refusal
from policy_engine.wire.errors import INTERNAL_ERROR, METHOD_NOT_FOUND

from .backend import Backend, BackendError
from .federation import (
    CACHE_HINTS,
    NAMED_LISTS,
    URI_LISTS,
    Routes,
    merge_cache_hints,
    merge_named,
    merge_uris,
)
from .reply import Reply, error_reply, refusal_error
from .scope import SCOPE

logger = logging.getLogger("policyc.gateway")

_MAX_PAGES = 100

Call = Callable[[Backend, str, dict[str, Any] | None], Awaitable[Reply]]
"""One request to a backend through the chain (the session's own call path)."""


class Listings:
    """Lists every page of a backend's list through the chain, for the session."""

    def __init__(self, order: list[Backend], routes: Routes, call: Call):
        self._order = order
        self._routes = routes
        self._call = call
        self._learning: dict[tuple[int, str, str], anyio.Lock] = {}

    async def learn_once(
        self, chain: InterceptionSession, backend: Backend, method: str, key: str
    ) -> Reply | None:
        """:meth:`_learn`, once for calls that arrive together: the others wait for it
        (a burst of first calls must not list every page once each)."""
        slot = (id(chain), method, backend.name)
        lock = self._learning.setdefault(slot, anyio.Lock())
        try:
            async with lock:
                if not chain.needs_listing(method, backend.name):
                    return None
                return await self._learn(chain, backend, method, key)
        finally:
            if not lock.locked() and lock.statistics().tasks_waiting == 0:
                self._learning.pop(slot, None)

    async def _learn(
        self, chain: InterceptionSession, backend: Backend, method: str, key: str
    ) -> Reply | None:
        """List every page of ``method`` through the chain (resources: their templates
        too) before a call it governs; a listing that fails refuses the call."""
        _, failure = await self._whole_list(backend, method, key)
        templates: list[Any] = []
        if failure is None and method == "resources/list":
            templates, failure = await self._whole_list(
                backend, "resources/templates/list", "resourceTemplates"
            )
            error = failure.error if failure is not None else None
            if error is not None and error.code == METHOD_NOT_FOUND:
                templates, failure = [], None  # a backend without templates
        if failure is None:
            chain.listed(method, backend.name, _uri_templates(templates))
            return None
        if failure.blocked_by_policy:
            return failure  # the policy refused the list itself: its own words
        logger.warning("backend %s: %s failed; refused the call it governs", backend.name, method)
        refusal = _listing_failed(method, backend.name)
        return Reply(error=refusal_error(refusal), refusal=refusal)

    async def federated_list(self, method: str) -> Reply:
        """Every backend's whole list (all pages), each through the chain, merged.

        A backend whose list fails is left out (and logged); a list the policy
        refuses refuses the merged list; if every backend failed, the first
        failure is the answer.
        """
        pages: list[tuple[str, dict[str, Any]]] = []
        hints: list[dict[str, Any]] = []
        failures: list[Reply] = []
        key = NAMED_LISTS.get(method) or URI_LISTS[method]
        for backend in self._order:
            hint: dict[str, Any] = {}
            items, failure = await self._whole_list(backend, method, key, hint)
            if failure is None:
                pages.append((backend.name, {key: items}))
                hints.append(hint)
                continue
            if failure.blocked_by_policy:
                return failure  # the policy refused this backend's list: the merged one too
            error = failure.error
            reason = error.message if error is not None else "no result"
            logger.warning("backend %s left out of %s: %s", backend.name, method, reason)
            failures.append(failure)
        if not pages and failures:
            return failures[0]
        merge = merge_named if method in NAMED_LISTS else merge_uris
        return Reply(result={**merge(method, pages, self._routes), **merge_cache_hints(hints)})

    async def _whole_list(
        self, backend: Backend, method: str, key: str, hint: dict[str, Any] | None = None
    ) -> tuple[list[Any], Reply | None]:
        """Every page of one backend's list; ``hint`` gets the last page's 2026 fields."""
        items: list[Any] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            params: dict[str, Any] | None = {"cursor": cursor} if cursor else None
            scope = SCOPE.get()
            if scope is not None and scope.envelope is not None:
                params = {**(params or {}), "_meta": scope.envelope}  # 2026-07-28 asks one
            try:
                reply = await self._call(backend, method, params)
            except InterceptorError as err:
                return items, error_reply(err)
            except BackendError as err:
                return items, Reply(error=err.error)
            if reply.error is not None or reply.result is None:
                return items, reply
            items.extend(reply.result.get(key) or [])
            if hint is not None:
                hint.update({k: reply.result[k] for k in CACHE_HINTS if k in reply.result})
            cursor = reply.result.get("nextCursor")
            if not isinstance(cursor, str):
                return items, None
        logger.warning("backend %s: %s has more than %d pages", backend.name, method, _MAX_PAGES)
        return items, None


def _listing_failed(method: str, server: str) -> Refusal:
    """The gateway could not check a call (not a policy's verdict): fail closed, and say so."""
    reason = f"the gateway could not list every page of {method} to check this call"
    data: dict[str, Any] = {"reason": reason, "listing": method, "server": server}
    return Refusal(INTERNAL_ERROR, "Listing failed", data, blocked_by_policy=False)


def _uri_templates(templates: list[Any]) -> list[str]:
    return [
        t["uriTemplate"]
        for t in templates
        if isinstance(t, dict) and isinstance(t.get("uriTemplate"), str)
    ]

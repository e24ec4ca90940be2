"""One MCP message in, one decision out: forward this (perhaps rewritten) payload, or refuse.

The event is the JSON-RPC method (any method, not only the SEP's list). The
payload is the request's ``params`` or the response's ``result``, never the
envelope. Which stage runs first depends on who the host acts for and on who
sent the request the message belongs to (see :meth:`Interception.side`).

Per connection, an :class:`InterceptionSession` remembers what a filtered list
hid (so a hidden tool, prompt or resource cannot be used anyway) and which
method each 2026-07-28 input request had (so the input responses on the
retried request run under the right event).
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Literal, Protocol

from policy_engine.chain import ChainTracer, InterceptorChain, chain_error, side_for
from policy_engine.wire import (
    AbortedAt,
    ChainExecutionParams,
    ChainExecutionResult,
    ChainResultEntry,
    InterceptorError,
    InvocationContext,
    Phase,
    Principal,
    Refusal,
    Side,
    ValidationMessage,
    ValidationSummary,
)
from policy_engine.wire.constants import SKIPPED_METHODS
from policy_engine.wire.errors import INTERNAL_ERROR, validation_error_item
from policy_engine.wire.tracecontext import from_meta, payload_meta

Role = Literal["client", "server"]
"""The side of the trust boundary the host acts for."""
BlockStyle = Literal["error", "result"]
"""What a blocked ``tools/call`` becomes: a JSON-RPC error, or an ``isError`` result."""
Origin = Literal["client", "server"]
"""Who sent the request a message belongs to (a response belongs to its request)."""


INPUT_REQUIRED_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})
"""Requests whose 2026-07-28 result may be an ``InputRequiredResult``."""

_CARRIED = ("inputResponses", "requestState")
_FAULTS = frozenset({"timeout", "mutation_failed"})
_MAX_REMEMBERED_INPUTS = 1024


@dataclass(frozen=True)
class ListKind:
    """A list method, the array in its result, and the call that uses one element."""

    key: str
    ident: str
    call: str
    noun: str


LISTS: Mapping[str, ListKind] = {
    "tools/list": ListKind("tools", "name", "tools/call", "tool"),
    "prompts/list": ListKind("prompts", "name", "prompts/get", "prompt"),
    "resources/list": ListKind("resources", "uri", "resources/read", "resource"),
}
_CALLS = {kind.call: kind for kind in LISTS.values()}
LIST_CHANGED: Mapping[str, str] = {
    f"notifications/{method.split('/')[0]}/list_changed": method for method in LISTS
}
"""The notification a backend sends when a list changed, and that list's method."""


@dataclass(frozen=True)
class Forward:
    """Pass the message on, with this payload."""

    payload: Any


@dataclass(frozen=True)
class Refuse:
    """Answer the sender instead: with the refusal's error or, for a blocked tool call
    under ``block_style="result"`` (``as_result``), its ``isError`` result."""

    refusal: Refusal
    as_result: bool = False
    run: ChainExecutionResult | None = None
    """The failed chain run, when a chain refused (not for a hidden element)."""

    @property
    def error(self) -> InterceptorError | None:
        """The JSON-RPC error to answer with, or ``None`` when a result answers."""
        return None if self.as_result else self.refusal.to_exception()

    @property
    def result(self) -> dict[str, Any] | None:
        """The ``isError`` tool result to answer with, or ``None`` when an error answers."""
        return self.refusal.to_result() if self.as_result else None


Outcome = Forward | Refuse


@dataclass(frozen=True)
class ChainRun:
    """One chain execution, as a decision log records it."""

    event: str
    phase: Phase
    side: Side
    origin: Origin
    server: str | None
    session_id: str | None
    result: ChainExecutionResult
    payload: Any = None
    """The payload as received, before the chain: what `--record` writes."""
    principal_id: str | None = None
    """Who the message was for (``context.principal.id``): logged, never the token."""
    trace_id: str | None = None
    """The W3C trace the run belongs to (the client's, or the gateway's span's), so a
    decision-log line can be joined to its trace."""


class Interception:
    """The chain and the rules for running it on MCP messages, shared by every connection."""

    def __init__(
        self,
        chain: InterceptorChain,
        *,
        acts_for: Role = "client",
        block_style: BlockStyle = "error",
        chain_timeout_ms: int | None = None,
        observer: Callable[[ChainRun], None] | None = None,
        tracer: ChainTracer | None = None,
    ) -> None:
        """``tracer``: spans for each chain run and interceptor invocation (a host that
        exports traces passes ``observability.tracing.active()``)."""
        if acts_for not in ("client", "server"):
            raise ValueError(f"acts_for must be `client` or `server`, not `{acts_for}`")
        if block_style not in ("error", "result"):
            raise ValueError(f"block_style must be `error` or `result`, not `{block_style}`")
        self.chain = chain
        self.acts_for: Role = acts_for
        self.block_style: BlockStyle = block_style
        self.chain_timeout_ms = chain_timeout_ms
        self.observer = observer
        self.tracer = tracer

    def hooked(self, event: str, phase: Phase) -> bool:
        """Whether any entry fires on this event and phase."""
        return self.chain.fires(event, phase)

    def side(self, origin: Origin, phase: Phase) -> Side:
        """Sending or receiving, for a message of a request that ``origin`` sent.

        Acting for the client, the client's requests are sent (mutate, then
        validate) and their results received (validate, then mutate); for a
        request the server sends (sampling, elicitation, roots) the roles swap.
        """
        role = self.acts_for if origin == "client" else _other(self.acts_for)
        return side_for(role, phase)

    async def run(
        self,
        event: str,
        phase: Phase,
        payload: Any,
        *,
        origin: Origin,
        server: str | None = None,
        session_id: str | None = None,
        principal: Principal | None = None,
    ) -> ChainExecutionResult | None:
        """The chain's result, or ``None`` when nothing is hooked (the payload passes as is)."""
        if not self.hooked(event, phase):
            return None
        side = self.side(origin, phase)
        meta = payload_meta(payload) if phase == "request" else None
        span = self.tracer.chain_run(event, phase, meta) if self.tracer is not None else None
        trace_id: str | None
        span_id: str | None
        if span is not None:
            trace_id, span_id = span.trace_id, span.span_id
        else:  # not tracing: the client's own trace still reaches the interceptors
            parent = from_meta(meta)
            trace_id = parent.trace_id if parent is not None else None
            span_id = parent.span_id if parent is not None else None
        context = InvocationContext(
            principal=principal,
            trace_id=trace_id,
            span_id=span_id,
            session_id=session_id,
            server=server,
            timestamp=datetime.now(UTC).isoformat(timespec="milliseconds"),
        )
        params = ChainExecutionParams(
            event=event,
            phase=phase,
            payload=payload,
            timeout_ms=self.chain_timeout_ms,
            context=context,
        )
        if span is None:
            result = await self.chain.execute(params, side=side)
        else:
            try:
                result = await self.chain.execute(params, side=side, span=span)
                span.set(
                    {
                        "policyc.event": event,
                        "policyc.phase": phase,
                        "policyc.chain.status": result.status,
                        "policyc.duration_ms": result.total_duration_ms,
                        **({"policyc.server": server} if server is not None else {}),
                    },
                    # A refusal is a decision, not a fault: only a crash or timeout is.
                    error=result.status if result.status in _FAULTS else None,
                )
            finally:
                span.end()
        if self.observer is not None:
            who = principal.id if principal is not None else None
            self.observer(
                ChainRun(
                    event, phase, side, origin, server, session_id, result, payload, who, trace_id
                )
            )
        return result

    def refusal(self, event: str, result: ChainExecutionResult) -> Refuse:
        """What a failed chain turns into: the SEP's error, or a readable ``isError`` result."""
        error = chain_error(result)
        if error is None:  # pragma: no cover - only failed results are refused
            raise ValueError("refusal of a successful chain")
        # A validator's verdict is the policy's; a timeout or a failed mutation is not.
        refusal = Refusal.of(error, blocked_by_policy=result.status == "validation_failed")
        return replace(self.refuse_with(event, refusal), run=result)

    def record_refusal(
        self,
        event: str,
        by: str,
        why: str,
        *,
        server: str | None,
        session_id: str | None,
        principal: Principal | None,
        payload: Any = None,
    ) -> None:
        """Put a refusal decided without a chain run (a call of what a list hides) on
        record as the decision log records a refused chain run: an audit trail that
        leaves out the calls refused earliest would miss the ones that matter.
        ``payload`` is the request as received, for `--record` and `policyc replay`."""
        if self.observer is None:
            return
        message = ValidationMessage(message=why, severity="error")
        entry = ChainResultEntry(
            interceptor=by,
            type="validation",
            phase="request",
            valid=False,
            severity="error",
            messages=[message],
        )
        result = ChainExecutionResult(
            status="validation_failed",
            event=event,
            phase="request",
            results=[entry],
            validation_summary=ValidationSummary(errors=1),
            total_duration_ms=0.0,
            aborted_at=AbortedAt(interceptor=by, reason=why, type="validation"),
        )
        side = self.side("client", "request")
        who = principal.id if principal is not None else None
        run = ChainRun(event, "request", side, "client", server, session_id, result, payload, who)
        self.observer(run)

    def refuse_with(self, event: str, refusal: Refusal) -> Refuse:
        """The configured block form of ``refusal`` for a message of ``event``."""
        as_result = (
            self.block_style == "result"
            and event == "tools/call"
            and refusal.code != INTERNAL_ERROR
        )
        return Refuse(refusal, as_result=as_result)


class InputKeys(Protocol):
    """Names for 2026-07-28 input requests that say, to whoever holds the key, which method
    each answers and which request asked: a host that sees a retried request without
    having seen the result that asked (another replica) still checks each input response
    under the right event, and a name sealed for one request opens on no other."""

    def seal(self, key: str, method: str, session_id: str | None, request: str) -> str: ...

    def open(self, sealed: str, session_id: str | None, request: str) -> tuple[str, str] | None:
        """``(key, method)``, or ``None`` for a name this host's key did not seal for
        ``request`` (:meth:`Asked.sealed`)."""
        ...


@dataclass(frozen=True)
class Asked:
    """What ties a retried 2026-07-28 request to the result that asked for input: its
    method, the tool, prompt or resource it names, and the backend's ``requestState``."""

    method: str
    target: str | None
    state: str | None

    @classmethod
    def of(cls, method: str, params: Mapping[str, Any] | None, state: Any) -> Asked:
        body = params or {}
        target = body.get("uri") if method == "resources/read" else body.get("name")
        return cls(
            method,
            target if isinstance(target, str) else None,
            state if isinstance(state, str) else None,
        )

    def sealed(self) -> str:
        """The form a seal covers (:class:`InputKeys`)."""
        return json.dumps([self.method, self.target, self.state])


class InterceptionSession:
    """One connection's view: what its lists hid and which input requests are open."""

    def __init__(
        self,
        core: Interception,
        *,
        session_id: str | None = None,
        principal: Principal | None = None,
        input_keys: InputKeys | None = None,
    ) -> None:
        """``input_keys`` for a view that does not see all of a caller's requests (a
        stateless replica): input requests are renamed with sealed names and the input
        responses renamed back, each checked under the method its name carries; a
        response under any other name is refused. Without it, this view remembers."""
        self.core = core
        self.session_id = session_id
        self.principal = principal
        self.input_keys = input_keys
        # (call method, server) -> {hidden identifier: interceptor that hid it}
        self._hidden: dict[tuple[str, str | None], dict[str, str]] = {}
        # (call method, server) -> identifiers some list showed after the chain
        self._shown: dict[tuple[str, str | None], set[str]] = {}
        # (call method, server) -> templates shown, once the host listed every page itself
        self._complete: dict[tuple[str, str | None], tuple[re.Pattern[str], ...]] = {}
        self._inputs: OrderedDict[tuple[str, str | None, str], str] = OrderedDict()

    async def _run(
        self, event: str, phase: Phase, payload: Any, origin: Origin, server: str | None
    ) -> ChainExecutionResult | None:
        return await self.core.run(
            event,
            phase,
            payload,
            origin=origin,
            server=server,
            session_id=self.session_id,
            principal=self.principal,
        )

    def bound(
        self, *, principal: Principal | None = None, session_id: str | None = None
    ) -> InterceptionSession:
        """This connection's state under another identity, for one call (in-code hosts)."""
        view = InterceptionSession.__new__(InterceptionSession)
        view.__dict__.update(self.__dict__)
        if principal is not None:
            view.principal = principal
        if session_id is not None:
            view.session_id = session_id
        return view

    # client to server

    async def client_request(
        self, method: str, params: dict[str, Any] | None, *, server: str | None = None
    ) -> Outcome:
        """A request from the client: refused, or forwarded with the chain's payload."""
        if method in SKIPPED_METHODS:
            return Forward(params)
        hidden = self._hidden_use(method, params, server)
        if hidden is not None:
            return hidden
        body: dict[str, Any] = params or {}
        carried: dict[str, Any] = {}
        if any(key in body for key in _CARRIED):
            body = {k: v for k, v in body.items() if k not in _CARRIED}
            if "requestState" in (params or {}):
                carried["requestState"] = (params or {})["requestState"]
            responses = (params or {}).get("inputResponses")
            if responses is not None:
                asked = Asked.of(method, params, (params or {}).get("requestState"))
                checked = await self._input_responses(responses, server, asked)
                if isinstance(checked, Refuse):
                    return checked
                carried["inputResponses"] = checked.payload
        result = await self._run(method, "request", body, "client", server)
        if result is None:  # nothing checks the request itself; its input responses were checked
            return Forward({**body, **carried} if carried else params)
        if not result.allowed:
            return self.core.refusal(method, result)
        final = result.final_payload
        if carried:
            final = {**(final if isinstance(final, dict) else {}), **carried}
        return Forward(final)

    async def client_response(
        self,
        method: str,
        result: dict[str, Any],
        *,
        server: str | None = None,
        request: Mapping[str, Any] | None = None,
    ) -> Outcome:
        """The result of a client's request (whose params were ``request``), before the
        client sees it."""
        if method in SKIPPED_METHODS:
            return Forward(result)
        if method in INPUT_REQUIRED_METHODS and result.get("resultType") == "input_required":
            asked = Asked.of(method, request, result.get("requestState"))
            return await self._input_requests(result, server, asked)
        run = await self._run(method, "response", result, "client", server)
        if run is not None and not run.allowed:
            return self.core.refusal(method, run)
        final = result if run is None else run.final_payload
        kind = LISTS.get(method)
        if kind is not None and run is not None:
            self._remember_hidden(kind, server, result, final, run)
        return Forward(final)

    # server to client

    async def server_request(
        self, method: str, params: dict[str, Any] | None, *, server: str | None = None
    ) -> Outcome:
        """A request from the server (sampling, elicitation, roots), before the client sees it."""
        if method in SKIPPED_METHODS:
            return Forward(params)
        run = await self._run(method, "request", params or {}, "server", server)
        if run is None:
            return Forward(params)
        return Forward(run.final_payload) if run.allowed else self.core.refusal(method, run)

    async def server_response(
        self, method: str, result: dict[str, Any], *, server: str | None = None
    ) -> Outcome:
        """The client's answer to a server's request, before the server gets it."""
        run = await self._run(method, "response", result, "server", server)
        if run is None:
            return Forward(result)
        return Forward(run.final_payload) if run.allowed else self.core.refusal(method, run)

    async def notification(
        self, method: str, params: dict[str, Any] | None, *, origin: Origin, server: str | None
    ) -> Outcome:
        """A notification (request phase, no answer): a refused one is dropped."""
        if method in SKIPPED_METHODS:
            return Forward(params)
        run = await self._run(method, "request", params or {}, origin, server)
        if run is None:
            return Forward(params)
        return Forward(run.final_payload) if run.allowed else self.core.refusal(method, run)

    # lists and what they hid

    def needs_listing(self, method: str, server: str | None) -> bool:
        """Whether a policy filters this list and this host has not listed every page of
        it itself since the last :meth:`forget`. A host lists it then, before the call it
        governs: what a client listed (one page, or on another replica) proves nothing."""
        kind = LISTS[method]
        return self.core.hooked(method, "response") and (kind.call, server) not in self._complete

    def listed(self, method: str, server: str | None, templates: Iterable[str] = ()) -> None:
        """Every page of this list went through the chain (:meth:`client_response`): from
        now on a call of this kind must name what a list showed, or (resources) match a
        URI template a list showed, and not what the chain removed."""
        call = LISTS[method].call
        self._shown.setdefault((call, server), set())
        self._complete[(call, server)] = tuple(_template_pattern(t) for t in templates)

    def forget(self, method: str) -> None:
        """Drop what this list hid and showed (its backend announced a change): list anew."""
        call = LISTS[method].call
        for table in (self._hidden, self._shown, self._complete):
            for key in [key for key in table if key[0] == call]:
                del table[key]

    def _remember_hidden(
        self,
        kind: ListKind,
        server: str | None,
        before: dict[str, Any],
        after: Any,
        run: ChainExecutionResult,
    ) -> None:
        shown = _idents(after, kind)
        removed = _idents(before, kind) - shown
        hidden = self._hidden.setdefault((kind.call, server), {})
        for ident in shown:
            hidden.pop(ident, None)
        self._shown.setdefault((kind.call, server), set()).update(shown)
        if removed:
            by = next((r.interceptor for r in run.results if r.modified), "policy")
            for ident in removed:
                hidden[ident] = by

    def _hidden_use(
        self, method: str, params: dict[str, Any] | None, server: str | None
    ) -> Refuse | None:
        """A call of what the chain removed from a list, or (once this host listed every
        page itself) of what no list showed: refused, whatever the client listed."""
        kind = _CALLS.get(method)
        if kind is None:
            return None
        key = (method, server)
        ident = (params or {}).get(kind.ident)
        by = self._hidden.get(key, {}).get(ident) if isinstance(ident, str) else None
        if by is not None:
            why = f"this {kind.noun} is hidden by policy"
        elif key in self._complete and not self._offered(key, ident):
            by, why = "gateway", f"no list shows this {kind.noun}"
        else:
            return None
        self.core.record_refusal(
            method,
            by,
            why,
            server=server,
            session_id=self.session_id,
            principal=self.principal,
            payload=params,
        )
        item = validation_error_item(by, "error", why)
        return self.core.refuse_with(method, Refusal.by_policy([item]))

    def _offered(self, key: tuple[str, str | None], ident: Any) -> bool:
        if not isinstance(ident, str):
            return False
        if ident in self._shown.get(key, ()):
            return True
        return any(pattern.fullmatch(ident) for pattern in self._complete[key])

    # 2026-07-28 input requests and responses

    async def _input_requests(
        self, result: dict[str, Any], server: str | None, asked: Asked
    ) -> Outcome:
        requests = result.get("inputRequests")
        if not isinstance(requests, dict):
            return Forward(result)
        checked: dict[str, Any] = {}
        for key, request in requests.items():
            method = request.get("method") if isinstance(request, dict) else None
            if not isinstance(method, str):
                checked[key] = request
                continue
            self._remember_input(asked, key, method)
            outcome = await self.server_request(method, request.get("params"), server=server)
            if isinstance(outcome, Refuse):
                return outcome
            name = key
            if self.input_keys is not None:
                name = self.input_keys.seal(key, method, self.session_id, asked.sealed())
            checked[name] = {**request, "params": outcome.payload}
        return Forward({**result, "inputRequests": checked})

    async def _input_responses(self, responses: Any, server: str | None, asked: Asked) -> Outcome:
        """Each input response checked under the method of the input request it answers,
        which must have been asked by this very request (``asked``); an answer shaped as
        another method's, or to a name sealed for another request, is refused."""
        if not isinstance(responses, dict):
            return Forward(responses)
        checked: dict[str, Any] = {}
        for key, response in responses.items():
            original, method = key, None
            if self.input_keys is not None:
                opened = self.input_keys.open(key, self.session_id, asked.sealed())
                if opened is None or not isinstance(response, dict):
                    return self._unanswerable("an input response that answers no input request")
                original, method = opened
            else:
                remembered = self._inputs.get(_remembered(asked, key))
                method = remembered or _guess_input_method(response)
                if method is None or not isinstance(response, dict):
                    checked[key] = response
                    continue
            shaped = _guess_input_method(response)
            if shaped is not None and shaped != method:
                return self._unanswerable(f"an input response shaped as {shaped} answers {method}")
            outcome = await self.server_response(method, response, server=server)
            if isinstance(outcome, Refuse):
                return outcome
            checked[original] = outcome.payload
        return Forward(checked)

    def _unanswerable(self, why: str) -> Refuse:
        item = validation_error_item("gateway", "error", f"{why} of this request")
        return self.core.refuse_with("inputResponses", Refusal.by_policy([item]))

    def _remember_input(self, asked: Asked, key: str, method: str) -> None:
        if self.input_keys is not None:
            return
        name = _remembered(asked, key)
        self._inputs[name] = method
        self._inputs.move_to_end(name)
        while len(self._inputs) > _MAX_REMEMBERED_INPUTS:
            self._inputs.popitem(last=False)


def _idents(listing: Any, kind: ListKind) -> set[str]:
    items = listing.get(kind.key) if isinstance(listing, dict) else None
    if not isinstance(items, list):
        return set()
    return {
        item[kind.ident]
        for item in items
        if isinstance(item, dict) and isinstance(item.get(kind.ident), str)
    }


def _remembered(asked: Asked, key: str) -> tuple[str, str | None, str]:
    """An input request as a view that saw it remembers it: by its request's method and
    state (an in-code host may not say which tool the result came from)."""
    return (asked.method, asked.state, key)


def _template_pattern(template: str) -> re.Pattern[str]:
    """A URI template (RFC 6570) as a pattern each of its expressions may fill in any way:
    loose on purpose, since it only admits what a template a list showed could name."""
    parts = re.split(r"\{[^{}]*\}", template)
    return re.compile(".*".join(re.escape(part) for part in parts), re.DOTALL)


def _guess_input_method(response: Any) -> str | None:
    """The method an input response answers, from its shape (keys the server chose are opaque)."""
    if not isinstance(response, dict):
        return None
    if "action" in response:
        return "elicitation/create"
    if "roots" in response:
        return "roots/list"
    if "model" in response or "role" in response:
        return "sampling/createMessage"
    return None


def _other(role: Role) -> Role:
    return "server" if role == "client" else "client"

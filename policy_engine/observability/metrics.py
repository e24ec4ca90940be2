"""Prometheus metrics, health and readiness: every metric policyc exports is defined here.

Hosts call the small hooks below (one line each, where the event happens);
this module owns names, labels, buckets and the endpoints. Label values never
come from a client: an interceptor name a client sent that the catalog does
not know is counted as ``(unknown)``, so a client cannot grow the series.

``/metrics`` (Prometheus text format), ``/healthz`` (the process answers) and
``/readyz`` (policies are loaded and every backend connection is up) are served
by :class:`ObservedApp` in front of the HTTP apps of ``policyc serve --http``
and ``policyc gateway --http``, and by :func:`start_listener` on a listener
of their own (``--metrics-listen HOST:PORT``, for the stdio transports).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST, ThreadingWSGIServer
from prometheus_client.registry import Collector
from starlette.types import ASGIApp, Receive, Scope, Send

from policy_engine.wire import ChainExecutionResult
from policy_engine.wire.constants import UNKNOWN

REGISTRY = CollectorRegistry(auto_describe=True)
"""policyc's own registry (with the process and platform collectors), not the global one."""
ProcessCollector(registry=REGISTRY)
PlatformCollector(registry=REGISTRY)


# Latency buckets in seconds: a compiled policy answers in well under a millisecond, a
# remote interceptor or a slow regex in tens of milliseconds.
_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)

DECISIONS = Counter(
    "policyc_decisions",
    "Interceptor decisions, by interceptor and outcome "
    "(valid, invalid, modified, unmodified, error).",
    ["interceptor", "outcome"],
    registry=REGISTRY,
)
INTERCEPTOR_SECONDS = Histogram(
    "policyc_interceptor_duration_seconds",
    "Time one interceptor took on one message.",
    ["interceptor"],
    buckets=_BUCKETS,
    registry=REGISTRY,
)
CHAINS = Counter(
    "policyc_chain_runs",
    "Chain runs on MCP messages, by status (success, validation_failed, mutation_failed, timeout).",
    ["status"],
    registry=REGISTRY,
)
CHAIN_SECONDS = Histogram(
    "policyc_chain_duration_seconds",
    "Time the whole chain took on one message.",
    buckets=_BUCKETS,
    registry=REGISTRY,
)
BACKEND_ERRORS = Counter(
    "policyc_backend_errors",
    "Gateway requests a backend failed: timeout, unavailable (gone or not running), "
    "or error (the backend's own JSON-RPC error).",
    ["backend", "kind"],
    registry=REGISTRY,
)
BACKEND_RESTARTS = Counter(
    "policyc_backend_restarts",
    "Backends the gateway restarted after they exited.",
    ["backend"],
    registry=REGISTRY,
)
SESSIONS = Counter(
    "policyc_sessions",
    "Client sessions opened (a stdio gateway has one; an HTTP host one per MCP session).",
    registry=REGISTRY,
)
STORE_ERRORS = Counter(
    "policyc_store_errors",
    "Flow-store and limit-store calls that failed (the message is refused: fail closed), "
    "by store (flow, limit), kind (memory, redis) and operation.",
    ["store", "kind", "operation"],
    registry=REGISTRY,
)
DECISION_LOG_DROPS = Counter(
    "policyc_decision_log_dropped_lines",
    "Decision-log (and --record) lines dropped: queue full or write failed.",
    registry=REGISTRY,
)
POLICIES_LOADED = Gauge(
    "policyc_policies_loaded",
    "1 once the host has loaded its policies and built its chain, else 0.",
    registry=REGISTRY,
)


class _SessionSource(Protocol):
    def live_sessions(self) -> int:
        """Sessions open now (``serve --http``'s session limiter)."""
        ...


class _Backend(Protocol):
    name: str
    alive: bool

    @property
    def closing(self) -> bool: ...


_loaded = threading.Event()
_backends: weakref.WeakSet[Any] = weakref.WeakSet()
_backends_lock = threading.Lock()


def _watched() -> list[_Backend]:
    with _backends_lock:
        return [b for b in list(_backends) if not b.closing]


class _BackendCollector(Collector):
    """``policyc_backends_up{backend}``: live backend connections, read at scrape time."""

    def collect(self) -> Iterator[Metric]:
        family = GaugeMetricFamily(
            "policyc_backends_up",
            "Live connections to each backend (one per stdio session, or one shared).",
            labels=["backend"],
        )
        counts: dict[str, int] = {}
        for backend in _watched():
            counts[backend.name] = counts.get(backend.name, 0) + int(backend.alive)
        for name, count in sorted(counts.items()):
            family.add_metric([name], count)
        yield family


REGISTRY.register(_BackendCollector())

_sessions_open = 0
_sessions_lock = threading.Lock()
_session_sources: weakref.WeakSet[Any] = weakref.WeakSet()


class _SessionCollector(Collector):
    """``policyc_sessions_active``: the gateway's open sessions (counted as they open and
    close) plus those each ``serve --http`` limiter holds, read at scrape time, so a
    session the SDK ended for idleness is not counted after its idle timeout."""

    def collect(self) -> Iterator[Metric]:
        with _sessions_lock:
            value = _sessions_open + sum(s.live_sessions() for s in list(_session_sources))
        yield GaugeMetricFamily("policyc_sessions_active", "Client sessions open now.", value)


REGISTRY.register(_SessionCollector())


# hooks: one call each where the event happens


def policies_loaded(loaded: bool = True) -> None:
    """The host has (or no longer has) a chain built from its policies."""
    POLICIES_LOADED.set(1 if loaded else 0)
    if loaded:
        _loaded.set()
    else:
        _loaded.clear()


def decision(interceptor: str, outcome: str, seconds: float) -> None:
    """One ``interceptor/invoke`` answered (``policyc serve``)."""
    _child(DECISIONS, interceptor, outcome).inc()
    if interceptor != UNKNOWN:
        _child(INTERCEPTOR_SECONDS, interceptor).observe(seconds)


def chain_run(result: ChainExecutionResult) -> None:
    """One chain run on an MCP message (the gateway, and in-code hosts as an observer)."""
    _child(CHAINS, result.status).inc()
    CHAIN_SECONDS.observe(result.total_duration_ms / 1000)
    for entry in result.results:
        _child(DECISIONS, entry.interceptor, _outcome(entry)).inc()
        _child(INTERCEPTOR_SECONDS, entry.interceptor).observe(entry.duration_ms / 1000)


_children: dict[tuple[object, ...], Any] = {}


def _child(metric: Any, *labels: str) -> Any:
    """``metric.labels(*labels)``, looked up once: the chain's names are a fixed set, and
    ``labels()`` costs microseconds per call on the hot path."""
    key = (id(metric), *labels)
    child = _children.get(key)
    if child is None:
        child = _children[key] = metric.labels(*labels)
    return child


def _outcome(entry: Any) -> str:
    if entry.error is not None:
        return "error"
    if entry.valid is not None:
        return "valid" if entry.valid else "invalid"
    return "modified" if entry.modified else "unmodified"


def chain_observer(run: Any) -> None:
    """An ``Interception`` observer: the run's result, as :func:`chain_run` counts it."""
    chain_run(run.result)


def backend_error(backend: str, kind: str) -> None:
    BACKEND_ERRORS.labels(backend, kind).inc()


def backend_restarted(backend: str) -> None:
    BACKEND_RESTARTS.labels(backend).inc()


def watch_backend(backend: _Backend) -> None:
    """Count this backend connection in ``policyc_backends_up`` and in readiness."""
    with _backends_lock:
        _backends.add(backend)


def session_opened() -> None:
    """A gateway session starts (closed with :func:`session_closed`)."""
    global _sessions_open
    SESSIONS.inc()
    with _sessions_lock:
        _sessions_open += 1


def session_closed() -> None:
    global _sessions_open
    with _sessions_lock:
        _sessions_open -= 1


def session_started() -> None:
    """An HTTP session that a watched source (:func:`watch_sessions`) keeps count of."""
    SESSIONS.inc()


def watch_sessions(source: _SessionSource) -> None:
    """Count ``source.live_sessions()`` in ``policyc_sessions_active`` at each scrape."""
    with _sessions_lock:
        _session_sources.add(source)


def store_error(store: str, kind: str, operation: str) -> None:
    """A flow-store (``store="flow"``) or limit-store (``"limit"``) call failed."""
    _child(STORE_ERRORS, store, kind, operation).inc()


def decision_log_dropped(lines: int = 1) -> None:
    DECISION_LOG_DROPS.inc(lines)


# health and readiness


def ready() -> tuple[bool, str]:
    """Ready when policies are loaded and every backend connection is up; and why not."""
    if not _loaded.is_set():
        return False, "policies not loaded"
    down = {b.name for b in _watched() if not b.alive}
    if down:  # names are in /metrics (policyc_backends_up), behind the token if any
        return False, f"backends down: {len(down)}"
    return True, "ready"


def exposition() -> bytes:
    """The registry in the Prometheus text format."""
    return generate_latest(REGISTRY)


def answer(path: str, paths: frozenset[str] | None = None) -> tuple[int, str, bytes] | None:
    """``(status, content type, body)`` for an observability path (of ``paths``), else ``None``."""
    if paths is not None and path not in paths:
        return None
    if path == METRICS_PATH:
        return 200, CONTENT_TYPE_LATEST, exposition()
    if path == HEALTH_PATH:
        return 200, "text/plain; charset=utf-8", b"ok\n"
    if path == READY_PATH:
        ok, why = ready()
        return (200 if ok else 503), "text/plain; charset=utf-8", f"{why}\n".encode()
    return None


METRICS_PATH = "/metrics"
HEALTH_PATH = "/healthz"
READY_PATH = "/readyz"
PROBES = frozenset({HEALTH_PATH, READY_PATH})
"""What a load balancer or orchestrator probes, without credentials."""
SCRAPE = frozenset({METRICS_PATH})
"""What a scraper reads: behind the host's bearer token when it has one."""


class ObservedApp:
    """ASGI: ``GET`` of ``paths`` answered here (no body read); all else goes to ``app``.

    A host puts the probes outside its bearer-token check and ``/metrics`` inside it.
    """

    def __init__(self, app: ASGIApp, paths: frozenset[str]) -> None:
        self.app = app
        self.paths = paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("method") in ("GET", "HEAD"):
            found = answer(scope.get("path", ""), self.paths)
            if found is not None:
                status, content_type, body = found
                headers = [(b"content-type", content_type.encode())]
                headers.append((b"content-length", str(len(body)).encode()))
                await send({"type": "http.response.start", "status": status, "headers": headers})
                head = scope.get("method") == "HEAD"
                await send({"type": "http.response.body", "body": b"" if head else body})
                return
        await self.app(scope, receive, send)


def observed(app: ASGIApp, paths: frozenset[str] = PROBES | SCRAPE) -> ObservedApp:
    """``app`` with ``paths`` (by default ``/metrics``, ``/healthz``, ``/readyz``) in front."""
    return ObservedApp(app, paths)


# a listener of its own, for the stdio transports


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Scrapes are not worth a line on stderr each."""


def _wsgi(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    method = environ.get("REQUEST_METHOD")
    found = answer(environ.get("PATH_INFO", "")) if method in ("GET", "HEAD") else None
    if found is None:
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"not found\n"]
    status, content_type, body = found
    reason = {200: "OK", 503: "Service Unavailable"}[status]
    start_response(f"{status} {reason}", [("Content-Type", content_type)])
    return [b"" if method == "HEAD" else body]


def start_listener(host: str, port: int) -> WSGIServer:
    """Serve the three paths on ``host:port`` from a daemon thread; ``shutdown()`` stops it.

    Raises ``OSError`` when the address cannot be bound (the caller tells the operator).
    """
    server = make_server(host, port, _wsgi, ThreadingWSGIServer, handler_class=_Quiet)
    thread = threading.Thread(target=server.serve_forever, name="metrics", daemon=True)
    thread.start()
    return server


__all__ = [
    "HEALTH_PATH",
    "METRICS_PATH",
    "PROBES",
    "READY_PATH",
    "REGISTRY",
    "SCRAPE",
    "UNKNOWN",
    "ObservedApp",
    "answer",
    "backend_error",
    "backend_restarted",
    "chain_observer",
    "chain_run",
    "decision",
    "decision_log_dropped",
    "exposition",
    "observed",
    "policies_loaded",
    "ready",
    "session_closed",
    "session_opened",
    "session_started",
    "start_listener",
    "store_error",
    "watch_backend",
    "watch_sessions",
]

"""/readyz follows what a load balancer needs to know: policies loaded, backend connections up."""

from __future__ import annotations

import sys

from policy_engine.gateway.backend import Backend, BackendSpec
from policy_engine.observability import metrics


async def _ignore(*args: object) -> None:
    return None


def test_ready_only_with_policies_loaded_and_every_backend_connection_up() -> None:
    metrics.policies_loaded(False)
    assert metrics.answer("/readyz") == (503, "text/plain; charset=utf-8", b"policies not loaded\n")
    metrics.policies_loaded()
    spec = BackendSpec("tickets", command=(sys.executable, "-c", "pass"))
    backend = Backend(spec, on_request=_ignore, on_notification=_ignore, on_exit=_ignore)
    try:
        status, _, body = metrics.answer("/readyz") or (0, "", b"")
        assert (status, body) == (503, b"backends down: 1\n")
        assert metrics.answer("/healthz") == (200, "text/plain; charset=utf-8", b"ok\n")
        backend.alive = True  # as the transport sets it once the backend is connected
        assert metrics.answer("/readyz") == (200, "text/plain; charset=utf-8", b"ready\n")
        backend.alive = False
        backend.close()  # its session ended: neither up nor down
        assert metrics.answer("/readyz") == (200, "text/plain; charset=utf-8", b"ready\n")
    finally:
        backend.close()


def test_only_the_three_exact_paths_are_answered_here() -> None:
    """Everything else (``/mcp`` above all) goes on to the host's app and its auth."""
    assert metrics.answer("/mcp") is None
    assert metrics.answer("/metrics/") is None
    found = metrics.answer("/metrics")
    assert found is not None and found[0] == 200
    assert b"# TYPE policyc_policies_loaded gauge" in found[2]

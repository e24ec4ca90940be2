"""The playground's HTTP side: its page, and a thin JSON API over `evaluate.run`.

It serves one local user, so every request must come from its own page:
the Host must be a loopback name (or the host it was told to bind), a POST
must carry an Origin equal to that host and a JSON content type (which a
cross-site form cannot send without a preflight this server never grants).
Bodies are capped, and evaluation is bounded in time.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from functools import cache
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ...language.limits import SourceLimits
from ...wire.events import STANDARD_EVENTS
from .evaluate import BadRequest, CheckOverdue, Explain, RunRequest, run

MAX_BODY_BYTES = 1024 * 1024
MAX_FILES = 20
EVAL_TIMEOUT_S = 2.0
CHECK_TIMEOUT_S = 10.0
"""Checking a set at the source limits ends within seconds (the analyses have a budget);
past this the page gets a 504 at once instead of waiting."""
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "[::1]"})
_STATIC = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/style.css": ("style.css", "text/css; charset=utf-8"),
}
_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


@cache
def _asset(name: str) -> bytes:
    return resources.files(__package__).joinpath("static", name).read_bytes()


def examples() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("static", "examples.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def example_policy() -> dict[str, str]:
    text = resources.files(__package__).joinpath("static", "example.policy").read_text("utf-8")
    return {"example.policy": text}


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status, headers=_HEADERS)


def _encodable(body: object) -> bool:
    """Whether the body is valid Unicode: JSON may spell a lone surrogate, UTF-8 cannot hold it.

    Checked before anything else, so no answer that quotes the text fails to encode (a 500).
    """
    try:
        json.dumps(body, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def create_app(
    files: dict[str, str],
    *,
    explain: Explain | None = None,
    extra_hosts: frozenset[str] = frozenset(),
    max_body_bytes: int = MAX_BODY_BYTES,
    timeout_s: float = EVAL_TIMEOUT_S,
    limits: SourceLimits | None = None,
    check_timeout_s: float | None = None,
) -> Starlette:
    """The playground app; evaluation gets ``timeout_s``, checking ``check_timeout_s``."""
    check_deadline = CHECK_TIMEOUT_S if check_timeout_s is None else check_timeout_s
    allowed_hosts = LOOPBACK_NAMES | extra_hosts
    initial = files or example_policy()

    def own_host(request: Request) -> str | None:
        host = request.headers.get("host", "")
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        return host if name in allowed_hosts else None

    def guarded(
        handler: Callable[[Request], Awaitable[Response]],
    ) -> Callable[[Request], Awaitable[Response]]:
        async def checked(request: Request) -> Response:
            host = own_host(request)
            if host is None:
                return _error(403, "bad_host", "requests must be addressed to the playground")
            if request.method == "POST":
                if request.headers.get("origin") != f"http://{host}":
                    return _error(403, "cross_origin", "requests must come from the playground")
                kind = request.headers.get("content-type", "").split(";")[0].strip()
                if kind != "application/json":
                    return _error(415, "not_json", "the body must be application/json")
            return await handler(request)

        return checked

    async def page(request: Request) -> Response:
        name, kind = _STATIC[request.url.path]
        return Response(_asset(name), media_type=kind, headers=_HEADERS)

    async def init(request: Request) -> Response:
        body = {"files": initial, "examples": examples(), "events": list(STANDARD_EVENTS)}
        return JSONResponse(body, headers=_HEADERS)

    async def run_endpoint(request: Request) -> Response:
        declared = request.headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > max_body_bytes):
            return _error(413, "too_large", f"the body is over {max_body_bytes} bytes")
        raw = bytearray()
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > max_body_bytes:
                return _error(413, "too_large", f"the body is over {max_body_bytes} bytes")
        try:
            body = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            return _error(400, "bad_json", f"the body is not JSON ({type(exc).__name__})")
        if not _encodable(body):
            return _error(400, "bad_json", "the body has a lone surrogate (`\\ud800`-`\\udfff`)")
        try:
            parsed = RunRequest.from_json(body, max_files=MAX_FILES)
            result = await run(parsed, explain, timeout_s, limits or SourceLimits(), check_deadline)
        except BadRequest as exc:
            return _error(400, "bad_request", str(exc))
        except CheckOverdue:
            return _error(504, "timeout", f"checking took longer than {check_deadline} s")
        except TimeoutError:
            return _error(504, "timeout", f"evaluation took longer than {timeout_s} s")
        except Exception as exc:  # every request gets one JSON answer, never a traceback
            return _error(500, "internal", f"evaluation failed: {type(exc).__name__}")
        return JSONResponse(result, headers=_HEADERS)

    routes = [Route(path, guarded(page), methods=["GET"]) for path in _STATIC]
    routes.append(Route("/api/init", guarded(init), methods=["GET"]))
    routes.append(Route("/api/run", guarded(run_endpoint), methods=["POST"]))
    return Starlette(routes=routes)

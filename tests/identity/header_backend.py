"""The recording backend over streamable HTTP, also writing down every request's
``Authorization`` header: the proof that a client's token never reaches a backend.

Run as ``python header_backend.py CALLS_LOG HEADERS_LOG PORT``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import uvicorn
from starlette.types import ASGIApp, Receive, Scope, Send

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gateway"))
sys.argv = [sys.argv[0], sys.argv[1], *sys.argv[2:]]
HEADERS = sys.argv[2]
PORT = int(sys.argv[3])
sys.argv = sys.argv[:2]

from recording_backend import server  # noqa: E402


def headers_logged(app: ASGIApp) -> ASGIApp:
    async def logged(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            found = dict(scope["headers"]).get(b"authorization", b"-").decode("latin-1")
            with open(HEADERS, "a", encoding="utf-8") as handle:
                handle.write(found + "\n")
        await app(scope, receive, send)

    return logged


if __name__ == "__main__":
    app = server.streamable_http_app()
    uvicorn.run(headers_logged(app), host="127.0.0.1", port=PORT, log_level="warning")

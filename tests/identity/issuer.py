"""A real token issuer on 127.0.0.1: RFC 8414 metadata, a JWKS, and tokens it signs.

It plays the authorization server's part that a resource server depends on:
the gateway and ``policyc serve`` fetch its metadata and keys over real HTTP.
Tests rotate its keys, take its JWKS down or make it slow, and count fetches.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import jwt
import uvicorn
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey


def new_key(kind: str = "RSA") -> PrivateKey:
    if kind == "EC":
        return ec.generate_private_key(ec.SECP256R1())
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def public_jwk(kid: str, key: PrivateKey) -> dict[str, Any]:
    algorithm = (
        jwt.algorithms.ECAlgorithm
        if isinstance(key, ec.EllipticCurvePrivateKey)
        else (jwt.algorithms.RSAAlgorithm)
    )
    entry: dict[str, Any] = json.loads(algorithm.to_jwk(key.public_key()))
    entry.update(kid=kid, use="sig")
    return entry


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Issuer:
    """Signs tokens with the keys it publishes (``add``/``rotate`` change which)."""

    def __init__(self) -> None:
        self.keys: dict[str, PrivateKey] = {}
        self.published: list[str] = []
        self.fetches = 0
        self.down = False
        self.delay_s = 0.0
        self.url = ""
        self.port = 0
        self.opaque: dict[str, dict[str, Any]] = {}
        """Opaque tokens and what introspection says of them (RFC 7662)."""
        self.introspections = 0
        self.client = ("policyc", "client-secret")

    # keys and tokens

    def add(self, kid: str, kind: str = "RSA", *, publish: bool = True) -> PrivateKey:
        key = new_key(kind)
        self.keys[kid] = key
        if publish:
            self.published.append(kid)
        return key

    def rotate(self, kid: str, kind: str = "RSA") -> None:
        """Publish a new key only (the old ones are withdrawn)."""
        self.add(kid, kind, publish=False)
        self.published = [kid]

    def claims(self, audience: str, **extra: Any) -> dict[str, Any]:
        now = int(time.time())
        base = {"iss": self.url, "aud": audience, "sub": "alice", "iat": now, "exp": now + 600}
        base.update(extra)
        return {k: v for k, v in base.items() if v is not None}

    def mint(self, claims: dict[str, Any], kid: str = "k1", algorithm: str | None = None) -> str:
        key = self.keys[kid]
        chosen = algorithm or ("ES256" if isinstance(key, ec.EllipticCurvePrivateKey) else "RS256")
        return jwt.encode(claims, key, algorithm=chosen, headers={"kid": kid})

    def public_pem(self, kid: str = "k1") -> bytes:
        return (
            self.keys[kid]
            .public_key()
            .public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )

    @staticmethod
    def forge(header: dict[str, Any], claims: dict[str, Any], secret: bytes | None) -> str:
        """A token signed by hand: ``alg: none`` (no secret) or HMAC with ``secret``."""
        signing = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(claims).encode())}"
        if secret is None:
            return signing + "."
        mac = hmac.new(secret, signing.encode(), hashlib.sha256).digest()
        return f"{signing}.{_b64(mac)}"

    # HTTP

    async def _metadata(self, request: Request) -> Response:
        return JSONResponse(
            {
                "issuer": self.url,
                "jwks_uri": f"{self.url}/jwks",
                "authorization_endpoint": f"{self.url}/authorize",
                "token_endpoint": f"{self.url}/token",
                "response_types_supported": ["code"],
            }
        )

    async def _jwks(self, request: Request) -> Response:
        import anyio

        self.fetches += 1
        if self.delay_s:
            await anyio.sleep(self.delay_s)
        if self.down:
            return Response("down", status_code=503)
        return JSONResponse({"keys": [public_jwk(kid, self.keys[kid]) for kid in self.published]})

    async def _introspect(self, request: Request) -> Response:
        self.introspections += 1
        expected = "Basic " + base64.b64encode(":".join(self.client).encode()).decode()
        if request.headers.get("authorization") != expected or self.down:
            return JSONResponse({"error": "invalid_client"}, status_code=401)
        form = await request.form()
        claims = self.opaque.get(str(form.get("token", "")))
        return JSONResponse({"active": True, **claims} if claims else {"active": False})

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/.well-known/oauth-authorization-server", self._metadata),
                Route("/jwks", self._jwks),
                Route("/introspect", self._introspect, methods=["POST"]),
            ]
        )


@contextmanager
def running_issuer(kind: str = "RSA") -> Iterator[Issuer]:
    """An issuer serving on 127.0.0.1 in a thread of its own, with key ``k1``."""
    issuer = Issuer()
    issuer.add("k1", kind)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    issuer.port = sock.getsockname()[1]
    issuer.url = f"http://127.0.0.1:{issuer.port}"
    server = uvicorn.Server(
        uvicorn.Config(issuer.app(), log_level="warning", lifespan="off", access_log=False)
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield issuer
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()

"""Opaque access tokens, asked about at the issuer's RFC 7662 introspection endpoint.

An opaque token says nothing by itself: the resource server posts it to the
authorization server, with its own client credentials, and gets back whether
it is ``active`` and its claims. The same checks as for a JWT then apply: the
issuer (when named), the audience bound to this resource (RFC 8707; a token
whose introspection names no audience is refused, since nothing binds it to
this server), the expiry, the scopes. Answers are cached, bounded in count
and never past the token's ``exp``, under a hash of the token (the token
itself is not kept); refusals are cached briefly too, so replaying a bad
token cannot turn the server into an amplifier, and at most
``max_concurrent`` introspection requests are in flight at once.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx2

from .auth import AuthConfigError
from .oauth import (
    DEFAULT_LEEWAY_S,
    MAX_TOKEN_BYTES,
    ClaimMapping,
    TokenRejected,
    Verified,
    fetch_bounded,
    verified,
)

MAX_ANSWER_BYTES = 64 * 1024


@dataclass
class IntrospectionVerifier:
    """Checks a token by asking the introspection endpoint (answers cached, bounded)."""

    issuer: str
    resource: str
    url: str
    client_id: str
    client_secret: str = field(repr=False)
    required_scopes: tuple[str, ...] = ()
    mapping: ClaimMapping = field(default_factory=ClaimMapping)
    cache_ttl_s: float = 60.0
    refusal_ttl_s: float = 10.0
    max_cached: int = 10_000
    max_concurrent: int = 16
    timeout_s: float = 5.0
    leeway_s: float = DEFAULT_LEEWAY_S
    _cache: OrderedDict[str, tuple[float, dict[str, Any] | TokenRejected]] = field(
        default_factory=OrderedDict, init=False, repr=False
    )
    _slots: anyio.Semaphore | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.issuer or not self.resource or not self.url:
            raise AuthConfigError("introspection needs an issuer, a resource URI and its URL")
        if not self.client_id or not self.client_secret:
            raise AuthConfigError("introspection needs this server's client id and secret")

    async def start(self) -> None:
        """Ask about a token that cannot exist: the endpoint must answer ``active: false``
        to these credentials, or the server refuses to start."""
        try:
            answer = await self._ask("policyc-start-probe")
        except (OSError, ValueError, TimeoutError, httpx2.HTTPError) as err:
            raise AuthConfigError(f"introspection at {self.url} does not answer: {err}") from None
        if answer.get("active") is not False:
            raise AuthConfigError(f"introspection at {self.url} vouched for a made-up token")

    async def verify(self, token: str) -> Verified:
        if len(token) > MAX_TOKEN_BYTES:
            raise TokenRejected("token too large")
        key = hashlib.sha256(token.encode()).hexdigest()
        now = time.monotonic()
        cached = self._cache.get(key)
        if cached is not None and cached[0] > now:
            self._cache.move_to_end(key)
            outcome = cached[1]
        else:
            outcome = await self._introspect(token)
            self._remember(key, outcome)
        if isinstance(outcome, TokenRejected):
            raise TokenRejected(outcome.reason)
        late = self._times_refusal(outcome)  # a cached answer outlives nbf, or nears exp
        if late is not None:
            raise late
        return verified(outcome, self.mapping, self.required_scopes)

    async def _introspect(self, token: str) -> dict[str, Any] | TokenRejected:
        try:
            answer = await self._ask(token)
        except (OSError, ValueError, TimeoutError, httpx2.HTTPError):
            # Not cached: the endpoint may be back for the next request; refused now.
            raise TokenRejected("token could not be checked") from None
        if answer.get("active") is not True:
            return TokenRejected("token is not active")
        if "iss" in answer and answer["iss"] != self.issuer:
            return TokenRejected("token from another issuer")
        audience = answer.get("aud")
        audiences = [audience] if isinstance(audience, str) else audience
        bare = self.resource.rstrip("/")
        if not isinstance(audiences, list) or not any(
            isinstance(a, str) and a.rstrip("/") == bare for a in audiences
        ):
            return TokenRejected("token not issued for this resource")
        return self._times_refusal(answer) or answer

    def _times_refusal(self, claims: dict[str, Any]) -> TokenRejected | None:
        now = time.time()
        expires = claims.get("exp")
        if isinstance(expires, int | float) and expires + self.leeway_s < now:
            return TokenRejected("token expired")
        starts = claims.get("nbf")
        if isinstance(starts, int | float) and starts - self.leeway_s > now:
            return TokenRejected("token not yet valid")
        return None

    def _remember(self, key: str, outcome: dict[str, Any] | TokenRejected) -> None:
        ttl = self.refusal_ttl_s if isinstance(outcome, TokenRejected) else self.cache_ttl_s
        if isinstance(outcome, dict) and isinstance(outcome.get("exp"), int | float):
            ttl = min(ttl, max(0.0, float(outcome["exp"]) - time.time()))
        self._cache[key] = (time.monotonic() + ttl, outcome)
        self._cache.move_to_end(key)
        while len(self._cache) > self.max_cached:
            self._cache.popitem(last=False)

    async def _ask(self, token: str) -> dict[str, Any]:
        if self._slots is None:
            self._slots = anyio.Semaphore(self.max_concurrent)
        async with self._slots:
            with anyio.fail_after(self.timeout_s):
                body = await fetch_bounded(
                    "POST",
                    self.url,
                    self.timeout_s,
                    MAX_ANSWER_BYTES,
                    data={"token": token, "token_type_hint": "access_token"},
                    auth=(self.client_id, self.client_secret),
                )
        answer = json.loads(body)
        if not isinstance(answer, dict):
            raise ValueError("introspection answer is not an object")
        return answer


__all__ = ["IntrospectionVerifier"]

"""Bearer JWTs checked against an issuer's JWKS: the OAuth 2.1 resource server's verifier.

MCP authorization makes an HTTP MCP server an OAuth resource server: it takes
access tokens an authorization server issued *for it* (RFC 8707: the token's
audience is this server's own resource URI) and must never accept one issued
for another resource. Every check fails closed: an algorithm off the allow-list
(``none`` and the HMAC family are never on it, so a public key can never be
used as an HMAC secret), an unknown key, a wrong issuer or audience, an expired
or not-yet-valid token, a token over the size bound. The signing keys come from
the issuer's JWKS, fetched before the server starts (an unreachable JWKS
refuses to start) and refreshed on a timer and on an unknown ``kid`` (key
rotation), at most once per ``min_refresh_s`` so a flood of forged ``kid``
values cannot turn the server into a JWKS hammer. JOSE is PyJWT's, with the
``cryptography`` backend the MCP SDK already installs.
"""

from __future__ import annotations

import getpass
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

import anyio
import httpx2
import jwt

from policy_engine.wire import Principal

from .auth import AuthConfigError

ALLOWED_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384")
"""Asymmetric algorithms only: a resource server holds no issuer secret."""
MAX_TOKEN_BYTES = 16 * 1024
MAX_JWKS_BYTES = 256 * 1024
MAX_JWKS_KEYS = 64
DEFAULT_LEEWAY_S = 30.0


class TokenRejected(Exception):
    """The request gets 401 (``invalid_token``) or 403 (``insufficient_scope``).

    ``reason`` is a fixed phrase for the client and the log: it never echoes the token.
    """

    def __init__(self, reason: str, *, status: int = 401, error: str = "invalid_token") -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.error = error


@dataclass(frozen=True)
class ClaimMapping:
    """Which token claims become ``context.principal``: dotted paths into the claims.

    ``roles`` and ``groups`` are copied to ``claims.roles`` and ``claims.groups``
    (lists of strings) so a policy reads the same field whatever the issuer calls
    it, e.g. ``realm_access.roles`` for Keycloak.
    """

    id_claim: str = "sub"
    roles_claim: str = "roles"
    groups_claim: str = "groups"

    def principal(self, claims: Mapping[str, Any]) -> Principal:
        subject = claim_at(claims, self.id_claim)
        if not isinstance(subject, str) or not subject:
            raise TokenRejected(f"token has no `{self.id_claim}` claim")
        mapped = dict(claims)
        mapped["roles"] = _strings(claim_at(claims, self.roles_claim))
        mapped["groups"] = _strings(claim_at(claims, self.groups_claim))
        mapped["scopes"] = list(scopes_of(claims))
        client = claims.get("client_id", claims.get("azp"))
        if client is not None and client == subject:
            return Principal(type="service", id=subject, claims=mapped)
        return Principal(type="user", id=subject, claims=mapped)


def claim_at(claims: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted path (``realm_access.roles``), or ``None``."""
    value: Any = claims
    for step in path.split("."):
        if not isinstance(value, Mapping) or step not in value:
            return None
        value = value[step]
    return value


def _strings(value: Any) -> list[str]:
    """A claim as a list of strings: a list keeps its strings, a string splits on spaces."""
    if isinstance(value, str):
        return value.split()
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return []


def scopes_of(claims: Mapping[str, Any]) -> tuple[str, ...]:
    """RFC 9068's space-separated ``scope``, or the ``scp`` list some issuers use."""
    return tuple(_strings(claims.get("scope", claims.get("scp"))))


def local_principal(
    principal_id: str | None = None, claims: Mapping[str, Any] | None = None
) -> Principal:
    """The stdio principal: the operator's own, from the config or a flag (else the OS user)."""
    return Principal(type="user", id=principal_id or _os_user(), claims=dict(claims or {}))


def _os_user() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no passwd entry (some containers): still a principal, not a crash
        return "local"


@dataclass(frozen=True)
class SigningKey:
    jwk: jwt.PyJWK
    algorithm: str | None
    """The JWK's own ``alg``: when given, the only algorithm the key verifies."""

    def fits(self, algorithm: str) -> bool:
        if self.algorithm is not None:
            return self.algorithm == algorithm
        kty = self.jwk.key_type
        return (kty == "RSA" and algorithm[:2] in ("RS", "PS")) or (
            kty == "EC" and algorithm[:2] == "ES"
        )


@dataclass
class JwksCache:
    """The issuer's signing keys by ``kid``: fetched, cached, refreshed within bounds."""

    url: str
    ttl_s: float = 300.0
    min_refresh_s: float = 10.0
    timeout_s: float = 5.0
    _keys: dict[str, SigningKey] = field(default_factory=dict, init=False, repr=False)
    _fetched: float = field(default=float("-inf"), init=False)
    _attempted: float = field(default=float("-inf"), init=False)
    _lock: anyio.Lock = field(default_factory=anyio.Lock, init=False, repr=False)

    async def start(self) -> None:
        """The first fetch, which must succeed: no keys means no request could pass."""
        if self._keys:
            return
        try:
            await self._fetch()
        except (OSError, ValueError, TimeoutError, httpx2.HTTPError) as err:
            raise AuthConfigError(f"JWKS at {self.url} could not be loaded: {err}") from None

    async def key(self, kid: str | None) -> SigningKey | None:
        """The key for ``kid`` (the only key when the token names none), refreshing if
        the cache is stale or the key unknown and no refresh happened lately."""
        now = time.monotonic()
        found = self._lookup(kid)
        if found is None or now - self._fetched > self.ttl_s:
            await self._refresh()
            found = self._lookup(kid)
        return found

    def _lookup(self, kid: str | None) -> SigningKey | None:
        if kid is None:
            return next(iter(self._keys.values())) if len(self._keys) == 1 else None
        return self._keys.get(kid)

    async def _refresh(self) -> None:
        async with self._lock:
            if time.monotonic() - self._attempted < self.min_refresh_s:
                return
            try:
                await self._fetch()
            except (OSError, ValueError, TimeoutError, httpx2.HTTPError):
                # The keys held stay in use until the TTL-driven retry succeeds; an
                # unknown kid stays unknown, so the token is refused.
                return

    async def _fetch(self) -> None:
        self._attempted = time.monotonic()
        with anyio.fail_after(self.timeout_s):
            body = await _get_bounded(self.url, self.timeout_s, MAX_JWKS_BYTES)
        document = json.loads(body)
        raw = document.get("keys") if isinstance(document, dict) else None
        if not isinstance(raw, list):
            raise ValueError("JWKS has no `keys` list")
        keys: dict[str, SigningKey] = {}
        for entry in raw[:MAX_JWKS_KEYS]:
            key = _usable(entry)
            if key is not None:
                keys[str(entry.get("kid", ""))] = key
        if not keys:
            raise ValueError("JWKS holds no usable signing key")
        self._keys = keys
        self._fetched = time.monotonic()


def _usable(entry: Any) -> SigningKey | None:
    """A signing key of an allowed algorithm; encryption keys and others are skipped."""
    if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
        return None
    if entry.get("kty") not in ("RSA", "EC"):
        return None
    algorithm = entry.get("alg")
    if algorithm is not None and algorithm not in ALLOWED_ALGORITHMS:
        return None
    try:
        return SigningKey(jwt.PyJWK(entry), algorithm)
    except (jwt.PyJWKError, jwt.InvalidKeyError, ValueError, TypeError, KeyError):
        return None


async def _get_bounded(url: str, timeout_s: float, limit: int) -> bytes:
    """GET ``url``; at most ``limit`` bytes are read, redirects are not followed."""
    return await fetch_bounded("GET", url, timeout_s, limit)


async def fetch_bounded(
    method: str, url: str, timeout_s: float, limit: int, **request: Any
) -> bytes:
    """A 200 response's body, at most ``limit`` bytes; no redirects (``ValueError`` else)."""
    headers = {"accept": "application/json", **request.pop("headers", {})}
    async with (
        httpx2.AsyncClient(timeout=timeout_s, follow_redirects=False) as client,
        client.stream(method, url, headers=headers, **request) as response,
    ):
        if response.status_code != 200:
            raise ValueError(f"HTTP {response.status_code}")
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > limit:
                raise ValueError(f"larger than {limit} bytes")
            chunks.append(chunk)
        return b"".join(chunks)


@dataclass(frozen=True)
class Verified:
    principal: Principal
    scopes: tuple[str, ...]


class TokenVerifier(Protocol):
    """What the resource server layer needs of a verifier (JWTs, or introspection)."""

    issuer: str
    resource: str
    required_scopes: tuple[str, ...]

    async def start(self) -> None:
        """Get ready before serving, or raise ``AuthConfigError`` (the server refuses to start)."""
        ...

    async def verify(self, token: str) -> Verified:
        """The caller, or ``TokenRejected``."""
        ...


def verified(
    claims: Mapping[str, Any], mapping: ClaimMapping, required_scopes: Sequence[str]
) -> Verified:
    """Checked claims to the principal, once the required scopes are there (else 403)."""
    principal = mapping.principal(claims)
    scopes = scopes_of(claims)
    missing = [scope for scope in required_scopes if scope not in scopes]
    if missing:
        raise TokenRejected(
            f"token lacks scope {' '.join(missing)}", status=403, error="insufficient_scope"
        )
    return Verified(principal, scopes)


@dataclass
class JwtVerifier:
    """Checks one bearer token: signature, issuer, audience, times, then scopes."""

    issuer: str
    resource: str
    """This server's canonical URI (RFC 8707); a token's ``aud`` must name it."""
    jwks: JwksCache
    required_scopes: tuple[str, ...] = ()
    mapping: ClaimMapping = field(default_factory=ClaimMapping)
    algorithms: Sequence[str] = ALLOWED_ALGORITHMS
    leeway_s: float = DEFAULT_LEEWAY_S

    def __post_init__(self) -> None:
        if not self.issuer or not self.resource:
            raise AuthConfigError("OAuth needs both an issuer and this server's resource URI")
        unsafe = [alg for alg in self.algorithms if alg not in ALLOWED_ALGORITHMS]
        if unsafe:
            raise AuthConfigError(f"algorithm(s) not allowed: {', '.join(unsafe)}")

    async def start(self) -> None:
        """Load the keys before serving: without them every request would be refused."""
        if not self.jwks.url:
            self.jwks.url = await discover_jwks_url(self.issuer, self.jwks.timeout_s)
        await self.jwks.start()

    async def verify(self, token: str) -> Verified:
        return verified(await self.claims(token), self.mapping, self.required_scopes)

    async def claims(self, token: str) -> dict[str, Any]:
        if len(token) > MAX_TOKEN_BYTES:
            raise TokenRejected("token too large")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise TokenRejected("token is not a JWT") from None
        algorithm = header.get("alg")
        if not isinstance(algorithm, str) or algorithm not in self.algorithms:
            raise TokenRejected("token algorithm not allowed")
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise TokenRejected("token key id is not a string")
        key = await self.jwks.key(kid)
        if key is None:
            raise TokenRejected("token signed by an unknown key")
        if not key.fits(algorithm):
            raise TokenRejected("token algorithm does not fit its key")
        try:
            decoded: dict[str, Any] = jwt.decode(
                token,
                key.jwk.key,
                algorithms=[algorithm],
                audience=_audiences(self.resource),
                issuer=self.issuer,
                leeway=self.leeway_s,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.ExpiredSignatureError:
            raise TokenRejected("token expired") from None
        except jwt.ImmatureSignatureError:
            raise TokenRejected("token not yet valid") from None
        except jwt.InvalidAudienceError:
            raise TokenRejected("token not issued for this resource") from None
        except jwt.InvalidIssuerError:
            raise TokenRejected("token from another issuer") from None
        except jwt.PyJWTError:
            raise TokenRejected("token signature or claims invalid") from None
        return decoded


@dataclass(frozen=True)
class OAuthSettings:
    """What an operator configures (flags or the gateway's ``[auth]`` table)."""

    issuer: str
    resource: str
    jwks_url: str | None = None
    """Default: the ``jwks_uri`` of the issuer's metadata (RFC 8414, then OIDC discovery)."""
    required_scopes: tuple[str, ...] = ()
    mapping: ClaimMapping = field(default_factory=ClaimMapping)
    introspection_url: str | None = None
    """Opaque tokens: ask this RFC 7662 endpoint about every token instead of the JWKS."""
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    """This server's credentials at the introspection endpoint (HTTP Basic)."""

    def verifier(self) -> TokenVerifier:
        if self.introspection_url is not None:
            from .introspection import IntrospectionVerifier

            return IntrospectionVerifier(
                issuer=self.issuer,
                resource=self.resource,
                url=self.introspection_url,
                client_id=self.client_id or "",
                client_secret=self.client_secret or "",
                required_scopes=self.required_scopes,
                mapping=self.mapping,
            )
        return JwtVerifier(
            issuer=self.issuer,
            resource=self.resource,
            jwks=JwksCache(self.jwks_url or ""),
            required_scopes=self.required_scopes,
            mapping=self.mapping,
        )


async def discover_jwks_url(issuer: str, timeout_s: float = 5.0) -> str:
    """The issuer's ``jwks_uri``; its metadata must name the same issuer (RFC 8414 §3.3)."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    candidates = [
        f"{parts.scheme}://{parts.netloc}/.well-known/oauth-authorization-server{path}",
        f"{issuer.rstrip('/')}/.well-known/openid-configuration",
    ]
    for url in candidates:
        try:
            with anyio.fail_after(timeout_s):
                document = json.loads(await _get_bounded(url, timeout_s, MAX_JWKS_BYTES))
        except (OSError, ValueError, TimeoutError, httpx2.HTTPError):
            continue
        if not isinstance(document, dict) or document.get("issuer") != issuer:
            continue
        found = document.get("jwks_uri")
        if isinstance(found, str) and found:
            return found
    raise AuthConfigError(f"issuer {issuer} publishes no metadata with a jwks_uri")


def _audiences(resource: str) -> list[str]:
    """The resource URI as written and without (or with) a trailing slash."""
    bare = resource.rstrip("/")
    return [resource, bare] if bare != resource else [resource, f"{resource}/"]


__all__ = [
    "ALLOWED_ALGORITHMS",
    "ClaimMapping",
    "JwksCache",
    "JwtVerifier",
    "OAuthSettings",
    "TokenRejected",
    "Verified",
    "claim_at",
    "discover_jwks_url",
    "local_principal",
    "scopes_of",
]

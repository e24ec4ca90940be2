"""The verifier against a real issuer over HTTP: keys, rotation, bounds, claim mapping."""

from __future__ import annotations

import time

import anyio
import pytest
from issuer import running_issuer

from policy_engine.server import AuthConfigError
from policy_engine.server.oauth import (
    ClaimMapping,
    JwksCache,
    JwtVerifier,
    OAuthSettings,
    TokenRejected,
)

pytestmark = pytest.mark.e2e

RESOURCE = "https://gateway.example/mcp"


def verifier(url: str, **options: object) -> JwtVerifier:
    jwks = JwksCache(f"{url}/jwks", min_refresh_s=float(options.pop("min_refresh_s", 0.5)))  # type: ignore[arg-type]
    return JwtVerifier(issuer=url, resource=RESOURCE, jwks=jwks, **options)  # type: ignore[arg-type]


async def test_a_rotated_key_is_fetched_once_its_kid_appears() -> None:
    with running_issuer() as issuer:
        check = verifier(issuer.url)
        await check.start()
        assert (await check.verify(issuer.mint(issuer.claims(RESOURCE)))).principal.id == "alice"
        issuer.rotate("k2", "EC")
        rotated = issuer.mint(issuer.claims(RESOURCE, sub="bob"), kid="k2")
        await anyio.sleep(0.6)  # past the refresh rate limit
        assert (await check.verify(rotated)).principal.id == "bob"
        # The withdrawn key is gone with the refresh: its tokens no longer pass.
        with pytest.raises(TokenRejected, match="unknown key"):
            await check.verify(issuer.mint(issuer.claims(RESOURCE), kid="k1"))


async def test_forged_kids_cannot_hammer_the_jwks() -> None:
    with running_issuer() as issuer:
        check = verifier(issuer.url, min_refresh_s=30.0)
        await check.start()
        before = issuer.fetches
        issuer.add("stranger", publish=False)
        for n in range(50):
            forged = issuer.mint(issuer.claims(RESOURCE, jti=str(n)), kid="stranger")
            with pytest.raises(TokenRejected, match="unknown key"):
                await check.verify(forged)
        assert issuer.fetches - before <= 1


async def test_jwks_down_or_slow_at_start_refuses_within_the_timeout() -> None:
    with running_issuer() as issuer:
        issuer.down = True
        with pytest.raises(AuthConfigError, match="could not be loaded"):
            await verifier(issuer.url).start()
        issuer.down, issuer.delay_s = False, 5.0
        slow = JwtVerifier(
            issuer=issuer.url,
            resource=RESOURCE,
            jwks=JwksCache(f"{issuer.url}/jwks", timeout_s=0.5),
        )
        started = time.monotonic()
        with pytest.raises(AuthConfigError):
            await slow.start()
        assert time.monotonic() - started < 4.5


async def test_the_jwks_url_is_discovered_from_the_issuer_metadata() -> None:
    with running_issuer() as issuer:
        check = OAuthSettings(issuer=issuer.url, resource=RESOURCE).verifier()
        await check.start()
        assert check.jwks.url == f"{issuer.url}/jwks"
        wrong = OAuthSettings(issuer=issuer.url + "/other", resource=RESOURCE).verifier()
        with pytest.raises(AuthConfigError, match="no metadata"):
            await wrong.start()


async def test_keycloak_roles_map_to_claims_roles() -> None:
    with running_issuer() as issuer:
        mapping = ClaimMapping(roles_claim="realm_access.roles", groups_claim="grp")
        check = verifier(issuer.url, mapping=mapping, required_scopes=("mcp",))
        await check.start()
        token = issuer.mint(
            issuer.claims(
                RESOURCE, realm_access={"roles": ["ops", 7]}, grp="a b", scope="mcp other"
            )
        )
        principal = (await check.verify(token)).principal
        assert principal.type == "user" and principal.id == "alice"
        assert principal.claims is not None
        assert principal.claims["roles"] == ["ops"]
        assert principal.claims["groups"] == ["a", "b"]
        assert principal.claims["scopes"] == ["mcp", "other"]
        service = issuer.mint(
            issuer.claims(RESOURCE, sub="ci-bot", client_id="ci-bot", scope="mcp")
        )
        assert (await check.verify(service)).principal.type == "service"
        with pytest.raises(TokenRejected) as lacking:
            await check.verify(issuer.mint(issuer.claims(RESOURCE, scope="other")))
        assert (lacking.value.status, lacking.value.error) == (403, "insufficient_scope")
        with pytest.raises(TokenRejected, match="no `sub`"):
            await check.verify(issuer.mint(issuer.claims(RESOURCE, sub=None, scope="mcp")))


def test_unsafe_algorithms_cannot_be_configured() -> None:
    with pytest.raises(AuthConfigError, match="HS256"):
        JwtVerifier(
            issuer="https://idp", resource=RESOURCE, jwks=JwksCache("x"), algorithms=("HS256",)
        )
    with pytest.raises(AuthConfigError, match="none"):
        JwtVerifier(
            issuer="https://idp", resource=RESOURCE, jwks=JwksCache("x"), algorithms=("none",)
        )

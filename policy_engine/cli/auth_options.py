"""``--auth-*`` flags: OAuth for ``policyc serve --http`` and ``policyc gateway --http``.

A flag wins over the gateway config's ``[auth]`` key of the same name. Any
flag without an issuer and a resource URI is a usage error: auth that is
half configured must refuse to start, never serve open.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar

import anyio
import click

from ..server import AuthConfigError, token_from_env
from ..server.oauth import ClaimMapping, OAuthSettings, TokenVerifier
from ..server.resource_server import metadata_url
from .exit_codes import ExitCode

F = TypeVar("F", bound=Callable[..., Any])

_FLAGS = (
    "auth_issuer",
    "auth_resource",
    "auth_jwks_url",
    "auth_required_scopes",
    "auth_id_claim",
    "auth_roles_claim",
    "auth_groups_claim",
    "auth_introspection_url",
    "auth_client_id",
    "auth_client_secret_env",
)


def auth_options(command: F) -> F:
    """The OAuth resource-server flags (see docs/identity.md)."""
    options = [
        click.option(
            "--auth-issuer",
            metavar="URL",
            help="HTTP: accept JWTs from this OAuth issuer (its `iss`).",
        ),
        click.option(
            "--auth-resource",
            "--auth-audience",
            "auth_resource",
            metavar="URL",
            help="HTTP: this server's resource URI, which a token's `aud` must name (RFC 8707).",
        ),
        click.option(
            "--auth-jwks-url",
            metavar="URL",
            help="The issuer's JWKS (default: from the issuer's metadata).",
        ),
        click.option(
            "--auth-required-scope",
            "auth_required_scopes",
            metavar="SCOPE",
            multiple=True,
            help="A scope every token must hold, else 403 (repeatable).",
        ),
        click.option(
            "--auth-id-claim", metavar="PATH", help="Claim for context.principal.id (default: sub)."
        ),
        click.option(
            "--auth-roles-claim",
            metavar="PATH",
            help="Dotted path to the roles, copied to claims.roles (default: roles; "
            "Keycloak: realm_access.roles).",
        ),
        click.option(
            "--auth-groups-claim",
            metavar="PATH",
            help="Dotted path to the groups, copied to claims.groups.",
        ),
        click.option(
            "--auth-introspection-url",
            metavar="URL",
            help="Opaque tokens: ask this RFC 7662 endpoint about each token (cached).",
        ),
        click.option(
            "--auth-client-id",
            metavar="ID",
            help="This server's client id at the introspection URL.",
        ),
        click.option(
            "--auth-client-secret-env",
            metavar="VAR",
            help="The environment variable holding this server's client secret.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def started_verifier(settings: OAuthSettings) -> TokenVerifier:
    """The verifier with the issuer's keys loaded, or exit 1: never serve unable to check."""
    try:
        verifier = settings.verifier()
        anyio.run(verifier.start)
    except AuthConfigError as err:
        click.echo(f"policyc: refusing to start: {err}", err=True)
        sys.exit(ExitCode.PROBLEMS)
    return verifier


def pop_auth_flags(values: dict[str, Any]) -> dict[str, Any]:
    """The ``--auth-*`` values (taken out of a command's keyword arguments)."""
    return {name: values.pop(name) for name in _FLAGS}


def oauth_settings(
    flags: dict[str, Any], base: OAuthSettings | None = None
) -> OAuthSettings | None:
    """The settings from ``base`` (a config file's) with the flags given on top."""
    given = {name: value for name, value in flags.items() if value not in (None, ())}
    if not given:
        return base
    issuer = given.get("auth_issuer", base.issuer if base else "")
    resource = given.get("auth_resource", base.resource if base else "")
    if not issuer or not resource:
        raise click.UsageError("OAuth needs both --auth-issuer and --auth-resource")
    try:
        metadata_url(resource)
    except AuthConfigError as err:
        raise click.UsageError(f"--auth-resource: {err}") from None
    settings = base or OAuthSettings(issuer=issuer, resource=resource)
    mapping = settings.mapping
    for flag, attribute in (
        ("auth_id_claim", "id_claim"),
        ("auth_roles_claim", "roles_claim"),
        ("auth_groups_claim", "groups_claim"),
    ):
        if flag in given:
            mapping = replace(mapping, **{attribute: given[flag]})
    secret = settings.client_secret
    if "auth_client_secret_env" in given:
        try:
            secret = token_from_env(given["auth_client_secret_env"])
        except AuthConfigError as err:
            raise click.UsageError(f"--auth-client-secret-env: {err}") from None
    return replace(
        settings,
        issuer=issuer,
        resource=resource,
        jwks_url=given.get("auth_jwks_url", settings.jwks_url),
        introspection_url=given.get("auth_introspection_url", settings.introspection_url),
        client_id=given.get("auth_client_id", settings.client_id),
        client_secret=secret,
        required_scopes=tuple(given.get("auth_required_scopes", settings.required_scopes)),
        mapping=ClaimMapping(mapping.id_claim, mapping.roles_claim, mapping.groups_claim),
    )

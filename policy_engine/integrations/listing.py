"""What an in-code host records once it listed a kind through the chain itself."""

from __future__ import annotations

from policy_engine.interception import InterceptionSession


def mark_listed(
    session: InterceptionSession, listing: str, server: str | None, *, complete: bool
) -> None:
    """Once every page went through the chain, this connection need not list again
    before each call. Resources are left to list again: a read may name a URI that only
    a template shows, and templates are listed apart."""
    if complete and listing != "resources/list":
        session.listed(listing, server)

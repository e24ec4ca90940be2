"""What an in-code host records once it listed a kind through the chain itself."""

from __future__ import annotations

from policy_engine.interception import Forward, InterceptionSession, Outcome


def mark_listed(
    session: InterceptionSession,
    listing: str,
    server: str | None,
    outcome: Outcome,
    *,
    complete: bool,
) -> None:
    """Once every page went through the chain and the chain let the list through, this
    connection need not list again before each call (a refused list shows nothing, so
    it proves nothing). Resources are left to list again: a read may name a URI that
    only a template shows, and templates are listed apart."""
    if complete and isinstance(outcome, Forward) and listing != "resources/list":
        session.listed(listing, server)

"""wire.suggest: the one did-you-mean every layer uses."""

from __future__ import annotations

from policy_engine.chain.settings import name_hint
from policy_engine.wire.suggest import closest, did_you_mean


def test_a_lookalike_is_suggested() -> None:
    assert did_you_mean("EMIAL", ["EMAIL", "PHONE"]) == "did you mean `EMAIL`?"
    assert did_you_mean("xyz", ["EMAIL", "PHONE"]) is None


def test_case_and_separators_win_over_lookalikes() -> None:
    assert closest("api_key", ["apiKeys", "apiKey"], n=3)[0] == "apiKey"
    assert closest("user-id", ["userId", "usersId"]) == ["userId"]


def test_a_name_that_holds_the_other_is_found() -> None:
    assert closest("PHONE", ["PHONE_NUMBER_INTERNATIONAL", "EMAIL"]) == [
        "PHONE_NUMBER_INTERNATIONAL"
    ]
    assert closest("ab", ["abcdefghij"]) == []  # too short to mean anything


def test_the_chain_suggests_with_the_same_helper() -> None:
    """A selector naming an interceptor that differs only in case gets the fix."""
    assert name_hint("PII-Guard", ["pii_guard", "audit"]) == "did you mean `pii_guard`?"
    assert name_hint("zzz", ["audit"]) == "known: `audit`"

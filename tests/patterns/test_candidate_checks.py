"""Candidate checks: Luhn, IBAN mod-97, the entropy heuristic, IPv6 and passwords.

The property tests build valid inputs with an independent reference
computation (plain big-int arithmetic), so a shared mistake would have to be
made twice to go unnoticed.
"""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from policy_engine.compiler.candidate_checks import (
    CANDIDATE_CHECKS,
    IBAN_LENGTHS,
    high_entropy,
    iban_valid,
    ipv6_plausible,
    luhn_valid,
    password_check,
    secret_value_check,
)

# --- reference implementations ----------------------------------------------


def luhn_check_digit(payload: str) -> str:
    """The digit that makes ``payload + digit`` pass Luhn."""
    total = 0
    for i, ch in enumerate(reversed(payload)):
        d = int(ch)
        if i % 2 == 0:  # these get doubled once the check digit is appended
            d = sum(divmod(d * 2, 10))
        total += d
    return str((10 - total % 10) % 10)


def iban_check_digits(country: str, bban: str) -> str:
    """ISO 13616 check digits: 98 - (BBAN + country + "00" as a number) mod 97."""
    digits = "".join(str(int(ch, 36)) for ch in bban + country + "00")
    return f"{98 - int(digits) % 97:02d}"


# --- Luhn ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "number",
    ["4111111111111111", "4111 1111 1111 1111", "4111-1111-1111-1111", "79927398713", "00"],
)
def test_luhn_accepts_known_good(number: str) -> None:
    assert luhn_valid(number)


@pytest.mark.parametrize(
    "number",
    ["4111111111111112", "79927398710", "", "0", " - ", "4111x111111111111", "٤١١١١١١١١١١١١١١١"],
)
def test_luhn_rejects(number: str) -> None:
    assert not luhn_valid(number)


@given(st.text(alphabet=string.digits, min_size=1, max_size=30))
def test_luhn_appended_check_digit_is_valid(payload: str) -> None:
    assert luhn_valid(payload + luhn_check_digit(payload))


@given(
    st.text(alphabet=string.digits, min_size=1, max_size=30),
    st.data(),
)
def test_luhn_detects_any_single_digit_change(payload: str, data: st.DataObject) -> None:
    number = payload + luhn_check_digit(payload)
    i = data.draw(st.integers(min_value=0, max_value=len(number) - 1), label="position")
    new = data.draw(st.sampled_from([d for d in string.digits if d != number[i]]), label="digit")
    assert not luhn_valid(number[:i] + new + number[i + 1 :])


@given(st.text(alphabet=string.digits, min_size=12, max_size=18), st.sampled_from([" ", "-"]))
def test_luhn_ignores_separators(payload: str, sep: str) -> None:
    number = payload + luhn_check_digit(payload)
    grouped = sep.join(number[i : i + 4] for i in range(0, len(number), 4))
    assert luhn_valid(grouped)


# --- IBAN ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "iban",
    [
        "DE89370400440532013000",
        "DE89 3704 0044 0532 0130 00",
        "gb82 west 1234 5698 7654 32",
        "NO9386011117947",
        "FR1420041010050500013M02606",
    ],
)
def test_iban_accepts_known_good(iban: str) -> None:
    assert iban_valid(iban)


@pytest.mark.parametrize(
    "iban",
    [
        "DE88370400440532013000",  # check digits off by one
        "DE8937040044053201300",  # one short for DE
        "XX89370400440532013000",  # no such country
        "DEAB370400440532013000",  # check digits must be digits
        "DE89-3704-0044-0532-0130-00",  # dashes are not IBAN print format
        "DE89370400440532013\u00e9\u00e9\u00e9",
        "\u017fE89370400440532013000",  # long s upper-cases to S in Python
        "",
        "DE",
    ],
)
def test_iban_rejects(iban: str) -> None:
    assert not iban_valid(iban)


_IBAN_ALPHABET = string.ascii_uppercase + string.digits


@st.composite
def valid_ibans(draw: st.DrawFn) -> str:
    country = draw(st.sampled_from(sorted(IBAN_LENGTHS)))
    size = IBAN_LENGTHS[country] - 4
    bban = draw(st.text(alphabet=_IBAN_ALPHABET, min_size=size, max_size=size))
    return country + iban_check_digits(country, bban) + bban


@given(valid_ibans())
def test_iban_generated_valid(iban: str) -> None:
    assert iban_valid(iban)
    assert iban_valid(" ".join(iban[i : i + 4] for i in range(0, len(iban), 4)))


@given(valid_ibans(), st.data())
def test_iban_detects_any_single_digit_change(iban: str, data: st.DataObject) -> None:
    positions = [i for i, ch in enumerate(iban) if ch.isdigit()]
    i = data.draw(st.sampled_from(positions), label="position")
    new = data.draw(st.sampled_from([d for d in string.digits if d != iban[i]]), label="digit")
    assert not iban_valid(iban[:i] + new + iban[i + 1 :])


# --- entropy ------------------------------------------------------------------


def test_high_entropy_thresholds() -> None:
    assert not high_entropy("")
    assert not high_entropy("a" * 20)
    assert not high_entropy("ab" * 10)  # exactly 1 bit per character
    assert high_entropy("ab" * 10, min_bits_per_char=1.0)
    assert high_entropy("0123456789abcdef", min_bits_per_char=4.0)  # exactly 4 bits
    assert not high_entropy("0123456789abcdef", min_bits_per_char=4.01)
    assert high_entropy("Xk29fLq8Rz0pWm4TnB7v")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Xk29fLq8Rz0pWm4TnB7v", True),
        ("0123456789abcdef", True),
        ("aaaaaaaaaaaaaaaaaaaa", False),  # no entropy
        ("1234567890123456", False),  # digits only
        ("my-very-long-but-plain", False),  # prose: one character kind
        ("REPLACE_WITH_YOUR_KEY", False),
        ("sentencepiece-unigram-v2", False),  # one digit does not make a second kind
        ("YOUR_ACCESS_TOKEN", False),
    ],
)
def test_secret_value_check(value: str, expected: bool) -> None:
    """The check sees the value only: the pattern's value group leaves the label out."""
    assert secret_value_check(value) is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [("2001:db8::1", True), ("::1", True), ("a::b", False), ("dead::beef", False)],
)
def test_ipv6_needs_a_digit(value: str, expected: bool) -> None:
    assert ipv6_plausible(value) is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1::2:3:4:5:6:7", True),
        ("1::2:3:4:5:6:7:8", False),
        ("1:2:3:4:5:6:7::8:9:a:b:c:d", True),
        ("1:2:3:4:5:6:7::8:9:a:b:c:d:e", False),
        ("::1:2:3:4:5:6:7", True),
        ("::1:2:3:4:5:6:7:8", False),
        ("2001:db8::", True),
        ("::ffff:192.0.2.128", True),
        ("1:2:3:4:5:6:7:8", True),
    ],
)
def test_ipv6_counts_the_groups_after_a_double_colon(value: str, expected: bool) -> None:
    """The count the IPV6 regex leaves open: as the regex's bounds once had it."""
    assert ipv6_plausible(value) is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("s3cr3t-Pa55", True),
        ("hunter22", True),
        ("password", False),
        ("CHANGEME", False),
        ("${DB_PASSWORD}", False),
        ("$(cat /run/secrets/db)", False),
        ("<password>", False),
        ("%(pw)s", False),
        ("****", False),
        ("xxxxxxxx", False),
        ("", False),
    ],
)
def test_password_check(value: str, expected: bool) -> None:
    assert password_check(value) is expected


def test_check_table() -> None:
    assert set(CANDIDATE_CHECKS) == {"luhn", "iban", "entropy", "aws_secret", "ipv6", "password"}
    assert CANDIDATE_CHECKS["luhn"] is luhn_valid
    assert CANDIDATE_CHECKS["iban"] is iban_valid
    assert CANDIDATE_CHECKS["entropy"] is secret_value_check
    assert CANDIDATE_CHECKS["ipv6"] is ipv6_plausible
    assert CANDIDATE_CHECKS["password"] is password_check


@given(st.text())
def test_checks_never_raise_on_arbitrary_text(text: str) -> None:
    for check in CANDIDATE_CHECKS.values():
        assert check(text) in (True, False)
    assert high_entropy(text) in (True, False)


@given(st.text(alphabet=string.digits + string.ascii_letters + " -", max_size=40))
def test_iban_and_luhn_never_raise_on_near_valid_text(text: str) -> None:
    assert iban_valid(text) in (True, False)
    assert luhn_valid(text) in (True, False)

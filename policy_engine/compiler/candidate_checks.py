"""Validators run on each regex match of a built-in pattern before it counts.

A regex can find something shaped like a card number, an IBAN or a secret, but
not tell a real one from a lookalike: that takes a checksum or a statistic.
``BuiltinPattern.check`` names one of ``CANDIDATE_CHECKS``; the compiler calls
it with the value (the pattern's ``value`` group, or the whole match without
one) and drops the match when it returns False.
They run once per candidate, never per input character, so each is a single
linear pass with no allocation beyond small ints. None of them raises on any
``str``: arbitrary text yields False, never an exception.

Notes on the google-re2 Python API (read from ``re2/__init__.py`` of
google-re2 1.1, the package installed here), for whoever compiles these:

* ``re2.Options()`` has settable attributes ``max_mem`` (bytes, default
  8 MiB = ``8 << 20``), ``case_sensitive``, ``longest_match``, ``never_nl``,
  ``dot_nl``, ``never_capture``, ``posix_syntax``, ``word_boundary``,
  ``perl_classes``, ``one_line``, ``literal``, ``log_errors`` and
  ``encoding`` (``re2.Options.Encoding.UTF8`` or ``.LATIN1``). Pass it as
  ``re2.compile(pattern, options)``; compiled regexps are cached (LRU, 128)
  keyed by pattern and option values.
* ``re2.Set.SearchSet(options)`` (also ``MatchSet``/``FullMatchSet`` for
  anchored sets) wraps RE2::Set: ``s.Add(pattern) -> int`` index (raises
  ``re2.error`` on a bad pattern), then ``s.Compile()`` (raises if it fails),
  then ``s.Match(text)`` returns a list of the indexes of the patterns that
  match anywhere, in no particular order, or ``None`` when none does (the
  google-re2-stubs say ``bool | None``; that is wrong). A Set reports *which*
  patterns match, not where: use it as a cheap prefilter, then run the
  individual regexes that hit for spans. Its ``options`` apply to every
  member, so per-pattern flags must be inline, e.g. ``(?i:...)``.
* ``max_mem`` bounds both the compiled program (too big fails with
  ``re2.error("pattern too large - compile failed")``, or "failed to compile
  Set") and the DFA cache at match time. If a Set's DFA runs out of memory,
  RE2::Set::Match returns false and only logs "DFA out of memory", which the
  wrapper turns into ``None``: indistinguishable from "no match". So give a
  Set of many patterns a raised budget
  (``o = re2.Options(); o.max_mem = 64 << 20``); all built-ins together
  compile to about 3,900 instructions and fit the default 8 MiB.
* Errors come as ``re2.error`` with the message as the only argument; RE2
  also logs parse errors to stderr (set ``log_errors = False`` to silence).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from types import MappingProxyType

__all__ = [
    "CANDIDATE_CHECKS",
    "IBAN_LENGTHS",
    "aws_secret_check",
    "high_entropy",
    "iban_valid",
    "ipv6_plausible",
    "luhn_valid",
    "password_check",
    "secret_value_check",
]

_DIGITS = "0123456789"
_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

# Payment cards never go beyond 19 digits; ISO/IEC 7812 allows 8 and up.
_LUHN_MIN_DIGITS = 2


# Luhn's doubled digit with its digits summed (7 -> 14 -> 5), as a byte map, so
# both halves of a number are mapped and summed as bytes in C (`str.translate`
# looks each character up in a dict).
_DOUBLED = bytes.maketrans(b"0123456789", b"0246813579")


def luhn_valid(s: str) -> bool:
    """True if the ASCII digits of ``s`` (spaces and dashes ignored) pass Luhn.

    Any other character, or fewer than two digits, makes it False: a single
    digit "passes" trivially and says nothing.
    """
    digits = s.replace(" ", "").replace("-", "")
    if len(digits) < _LUHN_MIN_DIGITS or not (digits.isascii() and digits.isdigit()):
        return False
    data = digits.encode()
    return (sum(data[-1::-2]) + sum(data[-2::-2].translate(_DOUBLED)) - 48 * len(data)) % 10 == 0


# Total IBAN length per country (ISO 13616 registry). Not exhaustive: a country
# missing here is rejected, which errs towards not redacting lookalikes.
IBAN_LENGTHS: Mapping[str, int] = MappingProxyType(
    {
        "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16,
        "BG": 22, "BH": 22, "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28,
        "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24,
        "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18,
        "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23,
        "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32,
        "LI": 21, "LT": 20, "LU": 20, "LV": 21, "LY": 25, "MC": 27, "MD": 24,
        "ME": 22, "MK": 19, "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NL": 18,
        "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24,
        "RS": 22, "RU": 33, "SA": 24, "SC": 31, "SD": 18, "SE": 24, "SI": 19,
        "SK": 24, "SM": 27, "ST": 25, "SV": 28, "TL": 23, "TN": 24, "TR": 26,
        "UA": 29, "VA": 22, "VG": 24, "XK": 20,
    }
)  # fmt: skip


# Each digit and letter as the digits it stands for (A is 10): digits are mapped
# too, since `str.translate` raises and clears a KeyError for each character
# its table lacks.
_IBAN_DIGITS = {ord(char): str(int(char, 36)) for char in _DIGITS + _UPPER}
_COUNTRY_DIGITS = {country: country.translate(_IBAN_DIGITS) for country in IBAN_LENGTHS}
# A plain dict: a mapping proxy's `get` is a method call through to it.
_IBAN_LENGTH = dict(IBAN_LENGTHS)


def iban_valid(s: str) -> bool:
    """True if ``s`` (spaces ignored, any case) is an IBAN with a valid mod-97 check.

    Country code and total length must agree with ``IBAN_LENGTHS``; the
    check digits make the rearranged number congruent to 1 mod 97.
    """
    compact = s.replace(" ", "")
    if not compact.isascii():  # str.upper() maps some non-ASCII letters to ASCII
        return False
    compact = compact.upper()
    country = compact[:2]
    if len(compact) != _IBAN_LENGTH.get(country, -1):
        return False
    check = compact[2:4]
    if not check.isdigit():
        return False
    # Letters become two digits (A is 10), and the BBAN, the country and the
    # check digits, in that order, one integer; most BBANs are digits already.
    bban = compact[4:]
    if not bban.isdigit():
        bban = bban.translate(_IBAN_DIGITS)
        if not bban.isdigit():
            return False
    return int(bban + _COUNTRY_DIGITS[country] + check) % 97 == 1


def high_entropy(s: str, min_bits_per_char: float = 3.0) -> bool:
    """True if the Shannon entropy of ``s`` is at least ``min_bits_per_char`` per char.

    Give it the value only: a label would add letters and inflate the
    figure. Generated keys score about 4-5.5 bits per character; repeated or
    sequential placeholders score far lower. The
    empty string has no entropy and is False.
    """
    n = len(s)
    if n == 0:
        return False
    counts: dict[str, int] = {}
    for ch in s:
        counts[ch] = counts.get(ch, 0) + 1
    bits = sum(c * math.log2(n / c) for c in counts.values()) / n
    # A small tolerance so that an exact threshold (e.g. 16 distinct
    # characters against 4.0) is not lost to floating-point rounding.
    return bits + 1e-9 >= min_bits_per_char


def _character_kinds(s: str) -> int:
    """How many of ASCII lowercase, uppercase and digits occur at least twice in ``s``.

    Twice, so that one digit in a written name (``unigram-v2``) does not make
    it look generated; a random key of 16 or more characters has several of
    each kind it draws from.
    """
    lower = upper = digit = 0
    for ch in s:
        if "a" <= ch <= "z":
            lower += 1
        elif "A" <= ch <= "Z":
            upper += 1
        elif "0" <= ch <= "9":
            digit += 1
    return (lower >= 2) + (upper >= 2) + (digit >= 2)


def secret_value_check(value: str) -> bool:
    """The "entropy" check: the value looks generated, not written.

    Shannon entropy alone (>= 3.0 bits/char) passes prose such as
    ``my-very-long-but-plain`` (3.8) and counters such as ``1234567890123456``
    (3.25), so the value must also mix at least two of lowercase, uppercase
    and digits (each at least twice), as generated keys (base62, base64, hex)
    practically always do.
    """
    return _character_kinds(value) >= 2 and high_entropy(value)


_AWS_SECRET_BITS = 4.0
_ALL_KINDS = 3


def aws_secret_check(value: str) -> bool:
    """The "aws_secret" check: 40 characters drawn at random from base64.

    Stricter than "entropy" because the value may have no label at all: a
    random 40-character base64 string has every character kind many times
    over and about 4.8 bits per character; hex digests (one case), paths
    and words do not.
    """
    return _character_kinds(value) == _ALL_KINDS and high_entropy(value, _AWS_SECRET_BITS)


def ipv6_plausible(value: str) -> bool:
    """The "ipv6" check: an address has a digit; ``a::b`` and ``dead::beef`` are words.

    It also counts the groups after a "::": at most six, or seven after a
    leading "::" (``1::2:3:4:5:6:7:8`` is too long). The IPV6 regex leaves
    that count open, because RE2 spells out a counted repetition group by
    group and the bound would push the program past the size at which RE2
    extracts the value by backtracking.
    """
    if not any("0" <= ch <= "9" for ch in value):
        return False
    head, compressed, tail = value.partition("::")
    if not compressed or not tail or "." in tail:
        return True
    return tail.count(":") < (6 if head else 7)


# Written where a password belongs in examples and templates.
_PLACEHOLDER_PASSWORDS = frozenset(
    {"password", "passwd", "pass", "pwd", "secret", "changeme", "example", "redacted", "hidden"}
)


def password_check(value: str) -> bool:
    """The "password" check: not a placeholder, a reference or a mask.

    ``password``, ``${DB_PASSWORD}``, ``$(cat ...)``, ``<password>``,
    ``%(pw)s`` and ``****`` stand where a password would go; they are not one.
    """
    if value.lower() in _PLACEHOLDER_PASSWORDS or value[:1] in ("$", "<", "%", "{"):
        return False
    return len(set(value)) > 2


CANDIDATE_CHECKS: Mapping[str, Callable[[str], bool]] = MappingProxyType(
    {
        "luhn": luhn_valid,
        "iban": iban_valid,
        "entropy": secret_value_check,
        "aws_secret": aws_secret_check,
        "ipv6": ipv6_plausible,
        "password": password_check,
    }
)

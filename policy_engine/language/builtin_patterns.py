"""The named patterns a policy can use without defining them (``matching EMAIL``).

This module is data only: the checker imports it to know which names exist, so
it must stay cheap to import and must not pull in ``re2``. The compiler turns
each entry into an RE2 regex and runs the named candidate ``check`` (see
``policy_engine.compiler.candidate_checks``) on every match, because some
facts (a Luhn digit, an IBAN checksum, randomness) cannot be said in a regex.

Conventions every entry keeps (the tests enforce them):

* ``regex`` is RE2 syntax: no lookaround, no backreferences. Boundaries are
  ``\\b`` (ASCII, like RE2's ``\\d`` and ``\\w``), so a match never starts or
  ends inside a longer word or number where that matters.
* The whole match (group 0) is the sensitive text, so ``redact`` replaces
  exactly it. There are no capturing groups, so any set of entries can be
  joined into one alternation or one ``re2.Set`` without renumbering.
* No entry matches the empty string.
* ``case_insensitive`` is metadata, not baked into ``regex``. Use ``source``,
  which wraps such a regex in a scoped ``(?i:...)``: a scoped flag works under
  default options, inside an alternation and inside an ``re2.Set`` (whose
  options are shared by every member, so per-pattern ``re2.Options`` cannot be
  used there).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["BUILTIN_PATTERNS", "BuiltinPattern"]


@dataclass(frozen=True)
class BuiltinPattern:
    """One named pattern: an RE2 regex plus an optional validator for its matches.

    ``check`` is a key of ``CANDIDATE_CHECKS``; a match the check rejects is
    not a match of the pattern.
    """

    name: str
    regex: str
    description: str
    check: str | None = None
    case_insensitive: bool = False

    @property
    def source(self) -> str:
        """The regex to hand to RE2 with default options (case flag applied inline)."""
        if self.case_insensitive:
            return f"(?i:{self.regex})"
        return self.regex


# --- shared fragments --------------------------------------------------------

# 0-255 without leading zeros ("01" is ambiguous: octal to some parsers).
# Longest alternatives first: RE2 keeps Perl's leftmost-first preference.
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_IPV4_CORE = rf"{_OCTET}(?:\.{_OCTET}){{3}}"
_HEX16 = r"[0-9A-Fa-f]{1,4}"
_SP = r"\x20"  # a literal space, visible in the regex source

# --- the patterns ------------------------------------------------------------

_EMAIL = (
    r"\b[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@"
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z]{2,63}\b"
)

# Area 001-899 except 666; group 01-99; serial 0001-9999. The separator is a
# dash or a space, the same one twice (spelled out because RE2 has no \1).
# Bare nine-digit runs are left out: too many ordinary numbers look like that.
_SSN_AREA = r"(?:00[1-9]|0[1-9][0-9]|[1-57-8][0-9]{2}|6(?:[0-57-9][0-9]|6[0-57-9]))"
_SSN_GROUP = r"(?:0[1-9]|[1-9][0-9])"
_SSN_SERIAL = r"(?:000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-9][0-9]{3})"
_SSN = rf"\b{_SSN_AREA}(?:-{_SSN_GROUP}-|\x20{_SSN_GROUP}\x20){_SSN_SERIAL}\b"


def _card_groups(sep: str) -> str:
    """Printed card layouts with one separator: 4-4-4-4-3, 4-4-4-(1..4), 4-6-(4..5)."""
    return (
        rf"{sep}[0-9]{{4}}{sep}[0-9]{{4}}{sep}(?:[0-9]{{4}}{sep}[0-9]{{3}}|[0-9]{{1,4}})"
        rf"|{sep}[0-9]{{6}}{sep}[0-9]{{4,5}}"
    )


# First digit 2-6 covers the major networks (Mastercard 2/5, Amex/Diners/JCB 3,
# Visa 4, Discover/UnionPay/Maestro 6) and halves the false positives; Luhn
# does the rest.
_CREDIT_CARD = rf"\b[2-6][0-9]{{3}}(?:[0-9]{{9,15}}|{_card_groups('-')}|{_card_groups(_SP)})\b"

# Either "+" and 7-15 digits (the E.164 limit) with light punctuation between
# digits, or a NANP number that has separators (area and exchange start 2-9).
# Unpunctuated local numbers are left out on purpose: they look like any ID.
# "\B" before "+" or "(" means "not right after a word character", so sums
# like 3+14155550132 and calls like f(415) 555-0132 are not numbers.
_PHONE = (
    r"\B\+[1-9](?:[ ().-]{0,2}[0-9]){6,14}\b"
    r"|(?:\b1[ .-])?(?:\B\([2-9][0-9]{2}\)\x20?|\b[2-9][0-9]{2}[ .-])[2-9][0-9]{2}[ .-][0-9]{4}\b"
)

_IPV4 = rf"\b{_IPV4_CORE}\b"

# Alternatives ordered so that leftmost-first picks the longest reading:
# IPv4-embedded, then full 8 groups, then "::" forms with >= 2 groups in all
# (so C++-style "a::" is not an address), then the "::"-led forms. "\B" before
# a leading "::" means "not right after a word character" (RE2 has no
# lookbehind), so the "::1" of "Foo::1" is not taken for an address.
_IPV6 = (
    rf"\B::(?:[Ff]{{4}}(?::0{{1,4}})?:)?{_IPV4_CORE}\b"
    rf"|\b{_HEX16}(?::{_HEX16}){{7}}\b"
    rf"|\b{_HEX16}(?::{_HEX16}){{1,6}}::(?:{_HEX16}(?::{_HEX16}){{0,5}}\b)?"
    rf"|\b{_HEX16}::{_HEX16}(?::{_HEX16}){{0,5}}\b"
    rf"|\B::{_HEX16}(?::{_HEX16}){{0,6}}\b"
)

# Country, check digits, then BBAN either compact or printed in groups of 4.
_IBAN = r"\b[A-Z]{2}[0-9]{2}(?:\x20?[A-Z0-9]{4}){2,7}(?:\x20?[A-Z0-9]{1,4})?\b"

# Credential prefixes only (long-term, temporary STS, bearer, context). IDs of
# users/roles/policies (AIDA, AROA, ...) are identifiers, not secrets.
_AWS_ACCESS_KEY = r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"

_ASSIGN = r"[\"']?\s{0,3}(?:=>|:=|[:=])\s{0,3}[\"']?"

# 40 base64 characters after a label that says "aws secret" or AWS's own
# "secret access key". No leading \b, so MY_AWS_SECRET_ACCESS_KEY still counts.
# The last character must end a word unless it is "/" or "+", so a longer
# value is not cut down to a 40-character prefix.
_AWS_SECRET_KEY = (
    r"(?:aws[_.-]?secret[_.-]?(?:access[_.-]?)?|secret[_.-]?access[_.-]?)key"
    + _ASSIGN
    + r"[A-Za-z0-9/+]{39}(?:[A-Za-z0-9]\b|[/+])"
)

_GITHUB_TOKEN = r"\bgh[pousr]_[A-Za-z0-9]{36,}\b|\bgithub_pat_[A-Za-z0-9]{22,}_[A-Za-z0-9]{59,}\b"

_SLACK_TOKEN = (
    r"\bxox[abprs]-(?:[0-9A-Za-z]{1,40}-){1,4}[0-9A-Za-z]{8,64}\b"
    r"|https://hooks\.slack\.com/(?:services/T[A-Z0-9]{6,}/B[A-Z0-9]{6,}/[A-Za-z0-9]{16,}"
    r"|(?:workflows|triggers)/T[A-Z0-9]{6,}/[A-Za-z0-9/]{16,})"
)

# Secret and restricted keys; publishable pk_ keys are meant to be public.
_STRIPE_KEY = r"\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}\b"

# A complete PEM/OpenSSH/PGP private key block, or failing that (truncated
# text) the BEGIN line and the armour lines after it. Both branches use the
# same character set on purpose: if the fallback stopped earlier than the
# lazy END search can scan, every search would rescan the same text and a
# run of BEGIN lines would cost quadratic time.
_PEM_LABEL = r"(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
_PEM_CHAR = r"[A-Za-z0-9+/=:,.()\\_-]"
_PRIVATE_KEY = (
    rf"-----BEGIN {_PEM_LABEL}"
    rf"(?:(?:\s|{_PEM_CHAR})*?-----END {_PEM_LABEL}|(?:\s*{_PEM_CHAR}+)*)"
)

# Header must be base64url JSON ("eyJ" is '{"'); empty signature allowed for
# unsecured (alg "none") tokens.
_JWT = r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*"

# Label (with up to 16 more name characters, e.g. API_KEY_PROD), an assignment,
# then 16+ token characters; a final "." is left out as a sentence's full stop.
# No leading \b, so GITHUB_TOKEN=... and X-Api-Key: ... are found (from the
# keyword on). The regex only finds candidates: the "entropy" check decides.
_API_KEY = (
    r"(?:api[_.-]?(?:key|secret|token)|apikey|access[_.-]?(?:key|token)|auth[_.-]?token"
    r"|client[_.-]?secret|secret|token)[A-Za-z0-9_-]{0,16}"
    + _ASSIGN
    + r"[A-Za-z0-9_+/~-][A-Za-z0-9_+/~.=-]{14,}[A-Za-z0-9_+/~=-]"
)

_URL_STOP = "\\s<>\"'\\x60{}|\\\\^"
_URL = (
    r"\b(?:https?|ftps?|wss?)://[A-Za-z0-9\[]"
    rf"(?:[^{_URL_STOP}]*[^{_URL_STOP}.,;:!?)\]])?"
)


def _table(*patterns: BuiltinPattern) -> Mapping[str, BuiltinPattern]:
    return MappingProxyType({p.name: p for p in patterns})


BUILTIN_PATTERNS: Mapping[str, BuiltinPattern] = _table(
    BuiltinPattern("EMAIL", _EMAIL, "An email address with a dotted domain."),
    BuiltinPattern("SSN", _SSN, "A US social security number, 123-45-6789 or 123 45 6789."),
    BuiltinPattern("CREDIT_CARD", _CREDIT_CARD, "A payment card number.", check="luhn"),
    BuiltinPattern("PHONE", _PHONE, "A phone number in E.164 or punctuated NANP form."),
    BuiltinPattern("IPV4", _IPV4, "A dotted-quad IPv4 address."),
    BuiltinPattern("IPV6", _IPV6, "An IPv6 address, full or compressed."),
    BuiltinPattern("IBAN", _IBAN, "An international bank account number.", check="iban"),
    BuiltinPattern("AWS_ACCESS_KEY", _AWS_ACCESS_KEY, "An AWS access key ID."),
    BuiltinPattern(
        "AWS_SECRET_KEY",
        _AWS_SECRET_KEY,
        "An AWS secret access key assigned to an AWS-secret label.",
        check="entropy",
        case_insensitive=True,
    ),
    BuiltinPattern("GITHUB_TOKEN", _GITHUB_TOKEN, "A GitHub classic or fine-grained token."),
    BuiltinPattern("SLACK_TOKEN", _SLACK_TOKEN, "A Slack API token or incoming-webhook URL."),
    BuiltinPattern("STRIPE_KEY", _STRIPE_KEY, "A Stripe secret or restricted API key."),
    BuiltinPattern("PRIVATE_KEY", _PRIVATE_KEY, "A PEM-armoured private key block."),
    BuiltinPattern("JWT", _JWT, "A JSON Web Token (JWS compact form)."),
    BuiltinPattern(
        "API_KEY",
        _API_KEY,
        "A random-looking value assigned to a key-ish label (api_key=..., token: ...).",
        check="entropy",
        case_insensitive=True,
    ),
    BuiltinPattern("URL", _URL, "An http(s), ftp(s) or ws(s) URL.", case_insensitive=True),
)

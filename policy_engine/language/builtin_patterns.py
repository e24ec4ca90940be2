"""The named patterns a policy can use without defining them (``matching EMAIL``).

This module is data only: the checker imports it to know which names exist, so
it must stay cheap to import and must not pull in ``re2``. The compiler turns
each entry into an RE2 regex and runs the named candidate ``check`` (see
``policy_engine.compiler.candidate_checks``) on every match, because some
facts (a Luhn digit, an IBAN checksum, randomness) cannot be said in a regex.

Conventions every entry keeps (the tests enforce them):

* ``regex`` is RE2 syntax: no lookaround, no backreferences. Boundaries are
  spelled out (``_START``, ``_END``, ``\\b``), so a match never starts or ends
  inside a longer word or number where that matters.
* The sensitive text is the group named ``value`` where there is one (the
  context before and after it, a label or a boundary character, survives
  redaction), otherwise the whole match. A branch without that group finds
  text to skip: RE2 has no lookbehind, so "not after a version word" is a
  branch that consumes the version. No other group captures.
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
_HEX = "[0-9A-Fa-f]"
_HEX16 = rf"{_HEX}{{1,4}}"
_SP = r"\x20"  # a literal space, visible in the regex source

# Before a value: the start of the text or a character that is not a letter
# or digit. Unlike "\b" this lets "_" through, so markdown emphasis such as
# _jane@example.com_ is found; the character is consumed but is not part of
# the value. After a value: "\b" or an underscore.
_START = r"(?:^|[^A-Za-z0-9])"
_END = r"(?:\b|_)"
# After a token whose alphabet has "_" and "-": not another such character,
# except one "_" (emphasis). A variable-length token's last character is
# never "_" for the same reason.
_TOKEN_END = r"_?(?:[^A-Za-z0-9_-]|$)"

# A label's assignment: quotes (also JSON-escaped ones), markdown emphasis or
# backticks around the label, then "=", ":", "=>", ":=", "->", a table's "|",
# an XML tag's ">", "to" ("set `api_key` to `...`") or "is" ("the api key is
# ..."), then an opening quote or backtick.
_ASSIGN = (
    r"[\"'`*\\]{0,3}\s{0,3}(?:=>|:=|->|[:=|>]|\b(?:to|is(?:\s+now)?)\b:?)\s{0,3}[\"'`*\\]{0,3}\s?"
)

# Close to a keyword: a few non-alphanumeric characters ("SSN: ", '"tel": "'),
# with up to three short words ("SSN on file: ...", "call me at ..."); never
# "+" or "(", which start a phone number.
_NEAR = r"[^A-Za-z0-9\n+(]{1,6}(?:[A-Za-z]{1,5}[^A-Za-z0-9\n+(]{1,6}){0,3}"

# --- the patterns ------------------------------------------------------------

# An SSH remote such as git@github.com:org/repo.git is skipped, not an address.
# The local part has no length bound: RFC 5321's 64 octets is a limit for
# senders, not a sign of something else, and "{0,63}" alone made the regex
# 445 RE2 instructions, past the 512 under which RE2 finds the value group by
# backtracking over a match rather than with its far dearer NFA.
_EMAIL = (
    rf"{_START}git@[A-Za-z0-9.-]+:"
    rf"|{_START}(?P<value>[A-Za-z0-9][A-Za-z0-9._%+-]*@"
    rf"(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z]{{2,63}}){_END}"
)

# Area 001-899 except 666; group 01-99; serial 0001-9999. The separator is a
# dash or a space, the same one twice (spelled out because RE2 has no \1).
# Nine bare digits count only right after an SSN keyword: the first branch
# consumes (and so skips) a bare nine-digit run that has none.
_SSN_AREA = r"(?:00[1-9]|0[1-9][0-9]|[1-57-8][0-9]{2}|6(?:[0-57-9][0-9]|6[0-57-9]))"
_SSN_GROUP = r"(?:0[1-9]|[1-9][0-9])"
_SSN_SERIAL = r"(?:000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-9][0-9]{3})"
# The keyword may end a compound name: patient_ssn, TIN_/_SSN, spouseSsn.
_SSN_KEYWORD = (
    r"(?:(?:\b|_)(?i:ssn|ss(?:#|[\s_-]?(?:no|nbr|num(?:ber)?)\b)"
    r"|soc(?:ial)?[\s_-]?sec(?:urity)?(?:[\s_-]?(?:number|nbr|num|no)\.?)?|social\b)"
    r"|[a-z](?:Ssn|SSN|SocialSecurity))"
)
# Between an SSN keyword and its number: like _NEAR, but "(" may stand there
# (no SSN starts with one) and a word may be longer: "SSN (primary) - ...".
_SSN_NEAR = r"[^A-Za-z0-9\n]{1,8}(?:[A-Za-z]{1,9}[^A-Za-z0-9\n]{1,8}){0,3}"
# A table's header line names the column and the value sits in the next
# line: "id,name,SSN\n12,Ann,123456789". The header must look like one: after
# the name (and up to four more characters, "SSN #") the line ends or goes on
# with a delimiter (, ; tab |); the value starts its line or follows one.
# Prose that mentions an SSN and breaks the line is not a header.
_BELOW = r"[^\n,;\t|]{0,4}(?:[,;\t|][^\n]*)?\n(?:[^\n]*?[,;\t|]\x20?\"?)?"
_SSN = (
    r"(?:^|[^A-Za-z0-9-])[0-9]{9}(?:\b|_)"
    rf"|(?:{_SSN_KEYWORD}(?:{_SSN_NEAR}|{_BELOW})|{_START})"
    rf"(?P<value>{_SSN_AREA}(?:-{_SSN_GROUP}-|\x20{_SSN_GROUP}\x20|{_SSN_GROUP}){_SSN_SERIAL})"
    rf"(?:\b[^-]|\b$|_)"
)


def _card_groups(sep: str) -> str:
    """Printed card layouts with one separator: 4-4-4-4-3, 4-4-4-(1..4), 4-6-(4..5)."""
    return (
        rf"{sep}[0-9]{{4}}{sep}[0-9]{{4}}{sep}(?:[0-9]{{4}}{sep}[0-9]{{3}}|[0-9]{{1,4}})"
        rf"|{sep}[0-9]{{6}}{sep}[0-9]{{4,5}}"
    )


# First digit 2-6 covers the major networks (Mastercard 2/5, Amex/Diners/JCB 3,
# Visa 4, Discover/UnionPay/Maestro 6) and halves the false positives; Luhn
# does the rest.
_CREDIT_CARD = (
    rf"{_START}(?P<value>[2-6][0-9]{{3}}"
    rf"(?:[0-9]{{9,15}}|{_card_groups('-')}|{_card_groups(_SP)})){_END}"
)

# Either "+" and 7-15 digits (the E.164 limit) with light punctuation between
# digits, or a NANP number that has separators (area and exchange start 2-9).
# "+" or "(" must not follow a letter or digit, so sums like 3+14155550132
# and calls like f(415) 555-0132 are not numbers.
# The keyword may end a compound name: home_phone, workTel, contactNumber.
_PHONE_KEYWORD = (
    r"(?:(?:\b|_)(?i:phone|tel|telephone|mobile|cell|fax|call|whatsapp)"
    r"|[a-z](?:Phone|Tel|Mobile|Cell|Fax))(?i:[\s_-]?(?:number|num|no)\.?)?"
)
# Compact or dashed national numbers ("0612345678", bare ten-digit NANP) count
# only right after a phone keyword: the first branch skips them otherwise.
_PHONE_NATIONAL = r"0[1-9](?:-?[0-9]){7,10}|[2-9][0-9]{2}[2-9][0-9]{6}"
# National numbers printed in the groups their countries use (UK 020 7946 0958,
# 0161 496 0000, 07700 900123; FR 01 23 45 67 89; AU 02 9876 5432; DE 030
# 741728) are phones with or without a keyword: a trunk "0", then groups split
# by single spaces (or five dotted pairs), never a date's 2-2-4. Runs of
# spaced four-digit groups that start with another digit (a card printed
# 4-4-4-4) are skipped, so their inner "0150 9391 4209" is not a phone.
# The trunk prefix may stand in parentheses: (02) 9876 5432, (0161) 496 0000,
# (030) 741728.
_PHONE_GROUPED = (
    r"0[1-9][0-9]{0,3}\x20[0-9]{3,4}\x20[0-9]{3,4}|0[1-9][0-9]{1,3}\x20[0-9]{6,8}"
    r"|0[1-9](?:\x20[0-9]{2}){4}|0[1-9](?:\.[0-9]{2}){4}"
    r"|\(0[1-9][0-9]{0,3}\)\x20?(?:[0-9]{3,4}[\x20-][0-9]{3,4}|[0-9]{5,8})"
)
# Skipped as well: a phone-shaped run that goes on with another "-digit" or
# ".digit" group (seq=210-622-9733-1, 862.720.3440.3), or that counts
# something ("329 816 9135 bytes", "0108 936 1346 events").
_PHONE_COUNT_UNIT = (
    r"(?:bytes|events|records|rows|items|entries|frames|requests|hits|users|lines|packets|files"
    r"|messages|times|ms)\b"
)
_PHONE = (
    r"(?:^|[^A-Za-z0-9+])[0-9]{3}[.-][0-9]{3}[.-][0-9]{4}[.-][0-9]"
    rf"|(?:^|[^A-Za-z0-9+])[0-9][0-9\x20]{{8,14}}[0-9]\x20{_PHONE_COUNT_UNIT}"
    rf"|{_START}(?:{_PHONE_NATIONAL}){_END}"
    r"|(?:^|[^A-Za-z0-9+])[1-9][0-9]{3}(?:\x20[0-9]{4}){2,}"
    rf"|(?:{_PHONE_KEYWORD}{_NEAR}|{_START})(?P<value>"
    r"\+[1-9](?:[ ().-]{0,2}[0-9]){6,14}"
    r"|(?:1[ .-])?(?:\([2-9][0-9]{2}\)\x20?|[2-9][0-9]{2}[ .-])[2-9][0-9]{2}[ .-][0-9]{4}"
    rf"|{_PHONE_GROUPED}|{_PHONE_NATIONAL}){_END}"
)

# Skipped: dotted runs of five or more numbers (part numbers, OIDs) and
# dotted quads right after a version or part word or a package pin (version
# 1.2.3.4, v10.0.0.1, build 4.18.0.30, SKU 12.34.56.78, foo==1.2.3.4,
# pkg@1.2.3.4), which the IPv4 shape cannot tell from an address.
_VERSION_WORD = (
    r"(?i:(?:(?:^|[^A-Za-z0-9])(?:v|ver|release|rel|build|firmware|fw|kernel|windows|chrome"
    r"|firefox|safari|edg|edge|opr|android|ios|macos|sdk|sku|part|p/n|pn|oid|section|driver"
    r"|runtime|bump(?:ed)?\s+to|rev|revision|patch|hotfix|install(?:ed|ing|er)?"
    r"|upgrad(?:e|ed|ing)(?:\s+(?:from|to))?|updat(?:e|ed|ing)\s+(?:from|to)"
    r"|notes(?:\s+for)?)|version)\.?[\s:/=#\"'(]{0,3})"
)
# A quad glued to a name by "-" (tool-1.2.3.4.zip) or followed by ".word" or
# "-rc1" is a file name or a version, not an address.
# Only a quad or longer is skipped ("v1" or "id_7" alone is nothing to pass
# over, and would only make the pattern's pass run on more texts).
# A version word also covers the second number of "from 1.2.3.4 to 1.2.3.5";
# a markdown heading that is a number ("## 4.2.1.0") is a release, and a
# browser's product token (Edg/120.0.2210.91) is a version too. A quad after
# "/" or "_" is an address (GET /hosts/10.20.30.40, ip_10.0.0.5): a redaction
# miss costs more than a masked version.
_IPV4 = (
    rf"(?:{_VERSION_WORD}|==|~=|>=|<=|@|\^|~|[A-Za-z]-|(?:^|[^A-Za-z0-9#])#{{1,6}}\x20+)"
    r"[0-9]+(?:\.[0-9]+){3,}(?:\s+(?:to|->)\s+[0-9]+(?:\.[0-9]+){3,})?"
    r"|(?:^|[^A-Za-z0-9.])[0-9]+(?:\.[0-9]+){4,}"
    rf"|(?:^|[^A-Za-z0-9.])(?P<value>{_IPV4_CORE})"
    r"(?:[^A-Za-z0-9._-]|[._][^A-Za-z0-9]|-[^A-Za-z]|[._-]?$)"
)

# Alternatives ordered so that leftmost-first picks the longest reading:
# IPv4-embedded, then the other "::"-led forms, then full 8 groups, then "::"
# forms with >= 2 groups in all (so C++-style "a::" is not an address). The
# start may not be a letter, digit or colon, so the "::1" of "Foo::1" is not
# taken for an address. The "ipv6" check wants a digit: "a::b" and
# "dead::beef" are not addresses anyone writes.
#
# Kept at most 512 RE2 instructions as a Latin-1 program (which the matcher
# runs on ASCII text): past that RE2 finds the value group with its NFA,
# several times dearer per address than backtracking over the match. RE2
# spells out every counted repetition, and a counted group
# ":[0-9A-Fa-f]{1,4}" is about 12 instructions a copy.
# The skips and the value share the start; the value's branches share their
# first group or their "::" (a group is always read whole, up to the ":"
# that follows, so this cannot change which branch wins). Two counts are
# left to others:
# * The groups after "::" are not counted here (they were at most 6, or 7
#   after a leading "::"); the "ipv6" check counts them, so the same
#   candidates pass. Only an over-long run the check then drops differs: its
#   match still takes the character after it, which an address right behind
#   it ("...:e:f,::1") would have needed as its start.
# * A run of nine or more groups is skipped whatever its groups' lengths
#   (they were 1-4 hex digits): a group of five or more stops every value
#   branch anyway, so skipping the run passes over nothing that was found,
#   unless the run runs straight into a ":fingerprint" label (and takes its
#   "f"), a text nobody writes.
_IPV6_AFTER = rf"{_HEX16}(?::{_HEX16})*"
_IPV6 = (
    r"(?i:fingerprint|md5|sha-?(?:1|256|512)|pin-sha[0-9]+|gpg)[\s:=]{1,3}[0-9A-Fa-f:]+"
    rf"|(?:^|[^A-Za-z0-9:])(?:{_HEX}+(?::{_HEX}+){{8,}}"
    rf"|{_HEX}{{2}}(?::{_HEX}{{2}}){{5,}}(?:[^0-9A-Za-z:]|$)"
    r"|(?P<value>"
    rf"::(?:(?:[Ff]{{4}}(?::0{{1,4}})?:)?{_IPV4_CORE}|{_IPV6_AFTER})"
    rf"|{_HEX16}(?:(?::{_HEX16}){{7}}|(?::{_HEX16}){{1,6}}::(?:{_IPV6_AFTER})?|::{_IPV6_AFTER})"
    r")(?:[^0-9A-Za-z:]|:[^0-9A-Za-z:]|:?$))"
)

# Country, check digits, then BBAN either compact or printed in groups of 4.
_IBAN = (
    rf"{_START}(?P<value>[A-Z]{{2}}[0-9]{{2}}(?:\x20?[A-Z0-9]{{4}}){{2,7}}(?:\x20?[A-Z0-9]{{1,4}})?)"
    rf"{_END}"
)

# Credential prefixes only (long-term, temporary STS, bearer, context). IDs of
# users/roles/policies (AIDA, AROA, ...) are identifiers, not secrets.
_AWS_ACCESS_KEY = rf"{_START}(?P<value>(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{{16}}){_END}"

# Exactly 40 base64 characters: after a label that says "aws secret" or AWS's
# own "secret access key" (no leading \b, so MY_AWS_SECRET_ACCESS_KEY counts),
# after an access key id (AKIA... / secret, a credentials CSV row), or on
# their own. The value must end there, so a longer value is not cut down to
# 40, and a bare value may not touch "_", "." or "-" (a piece of a JWT, a
# file name) except as markdown emphasis or a full stop. The "aws_secret"
# check wants lowercase, uppercase and digits and 4 bits of entropy per
# character, which a git SHA, a word or a path does not have.
_AWS_SECRET_KEY = (
    r"(?:(?:aws[_.\x20-]?secret[_.\x20-]?(?:access[_.\x20-]?)?|secret[_.\x20-]?access[_.\x20-]?)key"
    + _ASSIGN
    + r"|aws[_.\x20-]?secret[\x20:=]{1,3}"
    r"|(?:^|[^A-Za-z0-9])(?:AKIA|ASIA)[A-Za-z0-9]{16}(?:[\s,:;/|]{1,3}|\s(?:and|secret)\s)"
    r"|(?:^|[^A-Za-z0-9/+_.-]_?))(?P<value>[A-Za-z0-9/+]{40})"
    r"(?:[^A-Za-z0-9/+=_.-]|[._](?:[^A-Za-z0-9]|$)|$)"
)

# Classic tokens have 36 characters after the prefix; 20 or more are taken
# (see docs/patterns.md: GitHub may change the length, and a cut token is
# still most of a credential).
_GITHUB_TOKEN = (
    rf"{_START}(?P<value>gh[pousr]_[A-Za-z0-9]{{20,255}}"
    rf"|github_pat_[A-Za-z0-9]{{22,}}_[A-Za-z0-9]{{59,}}){_END}"
)

_SLACK_TOKEN = (
    rf"{_START}(?P<value>xox[abprs]-(?:[0-9A-Za-z]{{1,40}}-){{1,4}}[0-9A-Za-z]{{8,64}}"
    r"|xapp-[0-9]-[A-Z0-9]{8,}-[0-9]{6,}-[0-9a-f]{32,}"
    r"|https://hooks\.slack\.com/(?:services/T[A-Z0-9]{6,}/B[A-Z0-9]{6,}/[A-Za-z0-9]{16,}"
    rf"|(?:workflows|triggers)/T[A-Z0-9]{{6,}}/[A-Za-z0-9/]{{16,}})){_END}"
)

# Secret and restricted keys; publishable pk_ keys are meant to be public.
_STRIPE_KEY = rf"{_START}(?P<value>(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{{16,}}){_END}"

# "AIza" and exactly 35 more; the key may itself end in "_" or "-".
_GOOGLE_API_KEY = rf"(?:^|[^A-Za-z0-9-])(?P<value>AIza[0-9A-Za-z_-]{{35}}){_TOKEN_END}"

# Vendors whose keys carry a fixed prefix: GitLab, npm, Hugging Face,
# SendGrid, OpenAI and Anthropic (sk-...), Mailgun (key-...), PyPI,
# DigitalOcean, Shopify. The shapes are the vendors' published formats.
_VENDOR_KEY = (
    rf"{_START}(?P<value>gl(?:pat|dt|rt|ptt)-[0-9A-Za-z_-]{{19,}}[0-9A-Za-z-]"
    r"|npm_[A-Za-z0-9]{36}"
    r"|hf_[A-Za-z0-9]{30,}"
    r"|SG\.[0-9A-Za-z_-]{22}\.[0-9A-Za-z_-]{43}"
    r"|sk-(?:proj-|svcacct-|admin-|ant-(?:api|admin)[0-9]{2}-)?[A-Za-z0-9_-]{31,}[A-Za-z0-9-]"
    r"|key-[0-9A-Za-z]{32}"
    r"|pypi-AgE[A-Za-z0-9_-]{49,}[A-Za-z0-9-]"
    r"|do[opr]_v1_[a-f0-9]{64}"
    rf"|shp(?:at|ca|pa|ss)_[a-fA-F0-9]{{32}}){_TOKEN_END}"
)

# The credential of an HTTP Authorization header (any scheme word such as
# Bearer or Token, or none), or a token right after the word "Bearer"; a
# final "." is a full stop, not part of the token.
# The "entropy" check drops placeholders such as YOUR_ACCESS_TOKEN.
_BEARER_TOKEN = (
    rf"(?:(?i:\bauthorization){_ASSIGN}(?i:(?:bearer|token|basic|digest)\s+)?|(?i:\bbearer\s+))"
    r"(?P<value>[A-Za-z0-9._~+/-]{15,}[A-Za-z0-9_~+/-]=*)"
)

# A complete PEM/OpenSSH/PGP private key block, or failing that (truncated
# text) the BEGIN line and the armour lines after it; either way with a body
# (a run of 16 base64 characters), so a BEGIN line quoted in prose or code is
# not a key. Both branches use the same character set on purpose: if the
# fallback stopped earlier than the lazy END search can scan, every search
# would rescan the same text and a run of BEGIN lines would cost quadratic
# time.
_PEM_LABEL = r"(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
_PEM_CHAR = r"[A-Za-z0-9+/=:,.()\\_-]"
_PRIVATE_KEY = (
    rf"-----BEGIN {_PEM_LABEL}(?:\s|{_PEM_CHAR})*?[A-Za-z0-9+/]{{16}}"
    rf"(?:(?:\s|{_PEM_CHAR})*?-----END {_PEM_LABEL}|(?:\s*{_PEM_CHAR}+)*)"
)

# Header must be base64url JSON ("eyJ" is '{"'); empty signature allowed for
# unsecured (alg "none") tokens.
_JWT = (
    rf"{_START}(?P<value>eyJ[A-Za-z0-9_-]{{10,}}\.[A-Za-z0-9_-]{{2,}}\."
    r"(?:[A-Za-z0-9_-]*[A-Za-z0-9-])?)"
)

# Label (with up to 16 more name characters, e.g. API_KEY_PROD), an assignment,
# then 16+ token characters; a final "." is left out as a sentence's full stop.
# No leading \b, so GITHUB_TOKEN=... and X-Api-Key: ... are found (from the
# keyword on). The regex only finds candidates: the "entropy" check decides.
# Then, between label and value: an aside in parentheses ("api key (prod):"),
# up to three short words before an assignment ("the api secret on file:",
# "the consumer key we have is ..."), a ticket's " - ", or a table's header
# line with the value in the next line ("id,App Key\n7,<value>").
_API_KEY_LABEL = (
    r"(?:api[_.\x20-]?(?:key|secret|token)|apikey|access[_.\x20-]?(?:key|token)"
    r"|auth[_.\x20-]?token|client[_.\x20-]?secret|secret|token"
    r"|(?:signing|encryption|master|subscription|account|service|license|licence|private"
    r"|app|auth|authentication|client|consumer|developer|integration|hmac|webhook|session"
    r"|partner|merchant|shared|write|admin)"
    r"[_.\x20-]?key)[A-Za-z0-9_-]{0,16}"
)
_API_KEY = (
    _API_KEY_LABEL
    + r"(?:\x20?\([A-Za-z0-9\x20]{1,20}\))?"
    + rf"(?:(?:\x20[a-z]{{1,8}}){{0,3}}{_ASSIGN}|\x20-\x20|\x20|{_BELOW})"
    + r"(?P<value>[A-Za-z0-9_+/~-][A-Za-z0-9_+/~.=-]{14,}[A-Za-z0-9_+/~=-])"
)

# A database, broker or other URL with a password (user:password@host): only
# the password is the value, so user, host, port and database stay readable.
_CONNECTION_STRING = (
    r"(?i:\b(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?|mssql|sqlserver"
    r"|cockroachdb|clickhouse|jdbc:[a-z]+|https?|s?ftp|smtps?|ldaps?)://)"
    r"[^\s:/@\"'\\]{0,64}:(?P<value>[^\s@/\"'\\]{1,128})@[A-Za-z0-9\[]"
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
    BuiltinPattern("IPV4", _IPV4, "A dotted-quad IPv4 address, not after a version word."),
    BuiltinPattern("IPV6", _IPV6, "An IPv6 address, full or compressed.", check="ipv6"),
    BuiltinPattern("IBAN", _IBAN, "An international bank account number.", check="iban"),
    BuiltinPattern("AWS_ACCESS_KEY", _AWS_ACCESS_KEY, "An AWS access key ID."),
    BuiltinPattern(
        "AWS_SECRET_KEY",
        _AWS_SECRET_KEY,
        "An AWS secret access key: 40 random base64 characters, labelled or not.",
        check="aws_secret",
        case_insensitive=True,
    ),
    BuiltinPattern("GITHUB_TOKEN", _GITHUB_TOKEN, "A GitHub classic or fine-grained token."),
    BuiltinPattern("SLACK_TOKEN", _SLACK_TOKEN, "A Slack API token or incoming-webhook URL."),
    BuiltinPattern("STRIPE_KEY", _STRIPE_KEY, "A Stripe secret or restricted API key."),
    BuiltinPattern("GOOGLE_API_KEY", _GOOGLE_API_KEY, "A Google API key (AIza...)."),
    BuiltinPattern(
        "VENDOR_KEY",
        _VENDOR_KEY,
        "An API key with a vendor's prefix (glpat-, npm_, hf_, sk-, ...).",
    ),
    BuiltinPattern(
        "BEARER_TOKEN",
        _BEARER_TOKEN,
        "The credential of an Authorization header or after Bearer.",
        check="entropy",
    ),
    BuiltinPattern("PRIVATE_KEY", _PRIVATE_KEY, "A PEM-armoured private key block."),
    BuiltinPattern("JWT", _JWT, "A JSON Web Token (JWS compact form)."),
    BuiltinPattern(
        "API_KEY",
        _API_KEY,
        "A random-looking value assigned to a key-ish label (api_key=..., token: ...).",
        check="entropy",
        case_insensitive=True,
    ),
    BuiltinPattern(
        "CONNECTION_STRING",
        _CONNECTION_STRING,
        "The password of a database or broker URL (postgres://user:password@host).",
        check="password",
    ),
    BuiltinPattern("URL", _URL, "An http(s), ftp(s) or ws(s) URL.", case_insensitive=True),
)

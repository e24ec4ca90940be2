"""Positive and negative examples for every built-in pattern, run on RE2.

A pattern "finds" something when its regex matches and its candidate check
(if any) accepts the matched text: that is what a policy sees. Positives sit
inside a sentence and must come back as exactly one finding with the exact
span; negatives (many of them near misses) must produce no finding at all.

Secret-shaped fakes are assembled from pieces so that the source file holds
no literal that a secret scanner would flag.
"""

from __future__ import annotations

import base64
import json

import pytest
import re2

from policy_engine.compiler.candidate_checks import CANDIDATE_CHECKS
from policy_engine.compiler.matchers import PatternSpec, TextMatcher
from policy_engine.language.builtin_patterns import BUILTIN_PATTERNS, BuiltinPattern


def value_spans(pattern: BuiltinPattern, text: str) -> list[tuple[int, int]]:
    """Spans of the pattern's values in ``text`` that pass its check, as a policy sees them.

    The value is the group named ``value`` where the pattern has one (a match
    whose value group is empty or absent is skipped text), else the match:
    the compiler's own matcher says which.
    """
    check = CANDIDATE_CHECKS[pattern.check] if pattern.check else None
    matcher = TextMatcher([PatternSpec(pattern.name, pattern.source, check)])
    return [(hit.start, hit.end) for hit in matcher.hits(text)]


def findings(name: str, text: str) -> list[tuple[int, int]]:
    """Spans of the values of pattern ``name`` in ``text`` that pass its check."""
    return value_spans(BUILTIN_PATTERNS[name], text)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


# --- fakes -------------------------------------------------------------------

AWS_ID_BODY = "EXAMPLE0FAKE0KEY"  # 16 characters
AWS_SECRET = "Zx9fakeEXAMPLEkey/0123456789+abcdefGHIJK"  # 40 characters
HEX_KEY = "8f14e45fceea167a5a36dedd4bea2543"  # 32 hex digits
GH_BODY = "EXAMPLE" * 5 + "x"  # 36 characters
GH_PAT = "github" + "_pat_" + "11FAKE0EXAMPLE0000000A" + "_" + "Fake0" * 11 + "Exam"
SLACK_BOT = "xo" + "xb-" + "1234567890-1234567890123-" + "EXAMPLEexampleEXAMPLEexa"
SLACK_USER = "xo" + "xp-" + "1234567890-1234567890-1234567890123-" + "0123456789abcdef" * 2
SLACK_SESSION = "xo" + "xs-" + "0000000000-" + "FAKEfake0000"
SLACK_HOOK = "https://hooks." + "slack.com/services/T00000000/B00000000/" + "X" * 24
SLACK_WORKFLOW = "https://hooks." + "slack.com/workflows/T00000000/" + "A0000000000/000000/fake"
STRIPE_BODY = "0000EXAMPLE0000example0000"
API_VALUE = "Xk29fLq8Rz0pWm4TnB7v"
FILL = "FAKE0example0" * 8  # cut to the length a vendor's format wants
GOOGLE = "AI" + "za" + FILL[:35]
GITLAB = "gl" + "pat-" + FILL[:20]
NPM = "np" + "m_" + FILL[:36]
HF = "h" + "f_" + FILL[:34]
SENDGRID = "S" + "G." + FILL[:22] + "." + FILL[:43]
OPENAI = "s" + "k-proj-" + FILL[:48]
MAILGUN = "ke" + "y-" + "0123456789abcdef0123456789abcdef"
BEARER = "FAKE0example0FAKE0example0opaque"
DB_PASSWORD = "s3cr3t-Fake_Pa55"
JWT_HS = ".".join(
    [
        _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode()),
        _b64url(json.dumps({"sub": "fake-user", "name": "Example"}).encode()),
        _b64url(b"not-a-real-signature-0123456789ab"),
    ]
)
JWT_NONE = (
    _b64url(json.dumps({"alg": "none"}).encode())
    + "."
    + _b64url(json.dumps({"sub": "fake"}).encode())
    + "."
)
PEM_BODY = "MIIEfakeFAKEfakeFAKEfakeFAKEfake0000\nZm9vYmFyZm9vYmFyZm9vYmFy==\n"


def pem(label: str, body: str = PEM_BODY) -> str:
    return f"-----BEGIN {label}-----\n{body}-----END {label}-----"


PEM_ENCRYPTED = pem(
    "EC PRIVATE KEY",
    "Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00FF\n\nq83vFAKEfake0000FAKEfake\n",
)
PGP_BLOCK = pem("PGP PRIVATE KEY BLOCK", "Version: Fake 1\n\nlQOYBFakeFAKEfake0000FAKE\n=AbCd\n")

# (pattern, text, the exact substring that must be the only finding)
POSITIVES: list[tuple[str, str, str]] = [
    # Issue 30: shapes real text has that the packs used to miss.
    ("AWS_SECRET_KEY", f"AKIAIOSFODNN7EXAMPLE,{AWS_SECRET}", AWS_SECRET),
    ("AWS_SECRET_KEY", f"creds AKIAIOSFODNN7EXAMPLE / {AWS_SECRET} ok", AWS_SECRET),
    ("AWS_SECRET_KEY", f"aws secret {AWS_SECRET}", AWS_SECRET),
    ("AWS_SECRET_KEY", f"echo '{AWS_SECRET}'", AWS_SECRET),
    ("PHONE", "call the office on 020 7946 0958 today", "020 7946 0958"),
    ("PHONE", "contact: 0161 496 0000", "0161 496 0000"),
    ("PHONE", "mobile 07700 900123", "07700 900123"),
    ("PHONE", "<tel>01 23 45 67 89</tel>", "01 23 45 67 89"),
    ("PHONE", "au: 02 9876 5432", "02 9876 5432"),
    ("SSN", "SSN# 123456789", "123456789"),
    ("SSN", "ss#: 123456789", "123456789"),
    ("SSN", "soc sec no 123456789", "123456789"),
    ("API_KEY", f"signing_key: {HEX_KEY}", HEX_KEY),
    ("API_KEY", "webhook secret Zx9fakeEXAMPLEkey0123456789", "Zx9fakeEXAMPLEkey0123456789"),
    # Issue 30, round 2: labels written as documents write them.
    ("SSN", "patient_ssn=123456789", "123456789"),
    ("SSN", '{"spouseSsn": "123456789"}', "123456789"),
    ("SSN", "SS number: 123456789", "123456789"),
    ("SSN", "SSN (primary) - 123456789", "123456789"),
    ("SSN", "id,name,Borrower SSN,status\n7,Ann,123456789,active", "123456789"),
    ("PHONE", "home_phone: 0612345678", "0612345678"),
    ("PHONE", "office (02) 9876 5432", "(02) 9876 5432"),
    ("PHONE", "desk (0161) 496 0000.", "(0161) 496 0000"),
    ("API_KEY", f"**Api Key:** {API_VALUE}", API_VALUE),
    ("API_KEY", f"consumer_key={API_VALUE}", API_VALUE),
    ("API_KEY", f"Auth Key (prod) {API_VALUE}", API_VALUE),
    ("API_KEY", f"the consumer key we have is {API_VALUE}", API_VALUE),
    ("API_KEY", f"Case 12\nHmac Secret - {API_VALUE}", API_VALUE),
    ("API_KEY", f'"name","App Key"\n"Ann","{API_VALUE}"', API_VALUE),
    ("IPV4", "_192.0.2.10_ is up", "192.0.2.10"),
    ("IPV4", "range 10.0.0.1-9", "10.0.0.1"),
    ("EMAIL", "Contact alice.smith+tag@mail.example.co.uk.", "alice.smith+tag@mail.example.co.uk"),
    ("EMAIL", "from: <bob@example.org>", "bob@example.org"),
    ("EMAIL", "write x_y-z@sub-domain.example.io, thanks", "x_y-z@sub-domain.example.io"),
    ("EMAIL", "SHOUTING ALICE@EXAMPLE.COM here", "ALICE@EXAMPLE.COM"),
    ("SSN", "SSN 123-45-6789 on file", "123-45-6789"),
    ("SSN", "ssn:001-01-0001.", "001-01-0001"),
    ("SSN", "area 899: 899-99-9999", "899-99-9999"),
    ("SSN", "next to 666: 665-12-3456", "665-12-3456"),
    ("SSN", "spaced 667 01 0001 too", "667 01 0001"),
    ("CREDIT_CARD", "card 4111 1111 1111 1111.", "4111 1111 1111 1111"),
    ("CREDIT_CARD", "pan=4111-1111-1111-1111;", "4111-1111-1111-1111"),
    ("CREDIT_CARD", "mc 5555555555554444 ok", "5555555555554444"),
    ("CREDIT_CARD", "Amex 3782 822463 10005 exp 12/30", "3782 822463 10005"),
    ("CREDIT_CARD", "old visa 4222222222222 here", "4222222222222"),
    ("CREDIT_CARD", "19 digits 6222 0200 0000 0000 125 end", "6222 0200 0000 0000 125"),
    ("PHONE", "call +14155550132 now", "+14155550132"),
    ("PHONE", "us: +1 (415) 555-0132.", "+1 (415) 555-0132"),
    ("PHONE", "uk: +44 20 7946 0958.", "+44 20 7946 0958"),
    ("PHONE", "de +49 30 901820 office", "+49 30 901820"),
    ("PHONE", "office (415) 555-0132 ext", "(415) 555-0132"),
    ("PHONE", "cell 415-555-0132, evenings", "415-555-0132"),
    ("PHONE", "dial 1-415-555-0132", "1-415-555-0132"),
    ("IPV4", "host 192.168.1.10:80 up", "192.168.1.10"),
    ("IPV4", "mask 255.255.255.255", "255.255.255.255"),
    ("IPV4", "bind (0.0.0.0) all", "0.0.0.0"),
    # In a URL path or glued by "_", a quad is an address, not a version.
    ("IPV4", "GET /hosts/10.20.30.40 HTTP/1.1", "10.20.30.40"),
    ("IPV4", "see http://internal/10.1.2.3 now", "10.1.2.3"),
    ("IPV4", "ip_10.0.0.5 down", "10.0.0.5"),
    ("IPV4", "DNS updated 172.16.0.4", "172.16.0.4"),
    ("IPV4", "dns=8.8.8.8, backup", "8.8.8.8"),
    ("IPV6", "addr 2001:db8::1 ok", "2001:db8::1"),
    (
        "IPV6",
        "full 2001:0db8:0000:0000:0000:ff00:0042:8329 form",
        "2001:0db8:0000:0000:0000:ff00:0042:8329",
    ),
    ("IPV6", "link fe80::1%eth0 local", "fe80::1"),
    ("IPV6", "loopback ::1 only", "::1"),
    ("IPV6", "mapped ::ffff:192.0.2.128 v4", "::ffff:192.0.2.128"),
    ("IPV6", "url [2001:db8::8a2e:370:7334]:443", "2001:db8::8a2e:370:7334"),
    ("IPV6", "prefix 2001:db8:: routed", "2001:db8::"),
    ("IBAN", "iban DE89 3704 0044 0532 0130 00.", "DE89 3704 0044 0532 0130 00"),
    ("IBAN", "iban:DE89370400440532013000 ok", "DE89370400440532013000"),
    ("IBAN", "uk GB82 WEST 1234 5698 7654 32 acct", "GB82 WEST 1234 5698 7654 32"),
    ("IBAN", "shortest NO9386011117947 ok", "NO9386011117947"),
    ("IBAN", "fr FR1420041010050500013M02606 ok", "FR1420041010050500013M02606"),
    ("AWS_ACCESS_KEY", f"key AKIA{AWS_ID_BODY}, rotate", f"AKIA{AWS_ID_BODY}"),
    ("AWS_ACCESS_KEY", f"sts ASIA{AWS_ID_BODY} temp", f"ASIA{AWS_ID_BODY}"),
    ("AWS_ACCESS_KEY", f'"ABIA{AWS_ID_BODY}"', f"ABIA{AWS_ID_BODY}"),
    ("AWS_ACCESS_KEY", f"id=ACCA{AWS_ID_BODY}\n", f"ACCA{AWS_ID_BODY}"),
    (
        "AWS_SECRET_KEY",
        f"[default]\naws_secret_access_key = {AWS_SECRET}\n",
        AWS_SECRET,
    ),
    (
        "AWS_SECRET_KEY",
        f"export MY_AWS_SECRET_ACCESS_KEY={AWS_SECRET};",
        AWS_SECRET,
    ),
    (
        "AWS_SECRET_KEY",
        f'{{"SecretAccessKey": "{AWS_SECRET}"}}',
        AWS_SECRET,
    ),
    ("AWS_SECRET_KEY", f"aws.secret.key: {AWS_SECRET} x", AWS_SECRET),
    (
        "AWS_SECRET_KEY",
        f"aws_secret_key={AWS_SECRET[:-1]}/ next",
        f"{AWS_SECRET[:-1]}/",
    ),
    ("GITHUB_TOKEN", f"token ghp_{GH_BODY} ok", f"ghp_{GH_BODY}"),
    ("GITHUB_TOKEN", f"oauth=gho_{GH_BODY}&x=1", f"gho_{GH_BODY}"),
    ("GITHUB_TOKEN", f"'ghs_{GH_BODY}'", f"ghs_{GH_BODY}"),
    ("GITHUB_TOKEN", f"refresh ghr_{GH_BODY}.", f"ghr_{GH_BODY}"),
    ("GITHUB_TOKEN", f"GH_TOKEN={GH_PAT} done", GH_PAT),
    ("SLACK_TOKEN", f"bot {SLACK_BOT} here", SLACK_BOT),
    ("SLACK_TOKEN", f"user={SLACK_USER}\n", SLACK_USER),
    ("SLACK_TOKEN", f"session '{SLACK_SESSION}'", SLACK_SESSION),
    ("SLACK_TOKEN", f"post to {SLACK_HOOK} now", SLACK_HOOK),
    ("SLACK_TOKEN", f"flow {SLACK_WORKFLOW} now", SLACK_WORKFLOW),
    ("STRIPE_KEY", f"stripe sk_live_{STRIPE_BODY} prod", f"sk_live_{STRIPE_BODY}"),
    ("STRIPE_KEY", f"key=rk_live_{STRIPE_BODY}&a", f"rk_live_{STRIPE_BODY}"),
    ("STRIPE_KEY", f'"sk_test_{STRIPE_BODY}"', f"sk_test_{STRIPE_BODY}"),
    ("STRIPE_KEY", f"restricted rk_test_{STRIPE_BODY}.", f"rk_test_{STRIPE_BODY}"),
    ("PRIVATE_KEY", f"key:\n{pem('RSA PRIVATE KEY')}\nafter", pem("RSA PRIVATE KEY")),
    ("PRIVATE_KEY", f"pkcs8 {pem('PRIVATE KEY')} end", pem("PRIVATE KEY")),
    ("PRIVATE_KEY", f"{pem('OPENSSH PRIVATE KEY')}\n", pem("OPENSSH PRIVATE KEY")),
    ("PRIVATE_KEY", f"encrypted {PEM_ENCRYPTED}\n", PEM_ENCRYPTED),
    ("PRIVATE_KEY", f"pgp {PGP_BLOCK} end", PGP_BLOCK),
    (
        "PRIVATE_KEY",
        'truncated: -----BEGIN RSA PRIVATE KEY-----\nMIIEfakeFAKEfake0000\nAAAAtrunc\n\n"}',
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEfakeFAKEfake0000\nAAAAtrunc",
    ),
    ("JWT", f"Authorization: Bearer {JWT_HS}\n", JWT_HS),
    ("JWT", f'{{"token":"{JWT_HS}"}}', JWT_HS),
    ("JWT", f"unsecured {JWT_NONE} token", JWT_NONE),
    ("JWT", f"jwt={JWT_HS}&next=1", JWT_HS),
    ("API_KEY", f"config api_key={API_VALUE} done", API_VALUE),
    ("API_KEY", f"X-API-Key: {API_VALUE}\r\n", API_VALUE),
    ("API_KEY", f'{{"apiKey": "{API_VALUE}"}}', API_VALUE),
    ("API_KEY", f"GITHUB_TOKEN={API_VALUE}.", API_VALUE),
    ("API_KEY", f"client_secret => '{API_VALUE}=='", f"{API_VALUE}=="),
    ("API_KEY", f"ACCESS_KEY_PROD := {API_VALUE}", API_VALUE),
    ("API_KEY", f"<apiKey>{API_VALUE}</apiKey>", API_VALUE),
    ("API_KEY", f"the api key is {API_VALUE}, keep it", API_VALUE),
    ("API_KEY", f'{{\\"token\\": \\"{API_VALUE}\\"}}', API_VALUE),
    ("API_KEY", f"| api_key | {API_VALUE} |", API_VALUE),
    ("GOOGLE_API_KEY", f"key={GOOGLE}&q=maps", GOOGLE),
    ("GOOGLE_API_KEY", f'"apiKey": "{GOOGLE}"', GOOGLE),
    ("GOOGLE_API_KEY", f"markdown _{GOOGLE}_ here", GOOGLE),
    ("GOOGLE_API_KEY", f"GOOGLE_KEY={GOOGLE}\n", GOOGLE),
    ("VENDOR_KEY", f"gitlab {GITLAB} ok", GITLAB),
    ("VENDOR_KEY", f"//registry/:_authToken={NPM}\n", NPM),
    ("VENDOR_KEY", f"HF_TOKEN='{HF}'", HF),
    ("VENDOR_KEY", f"sendgrid {SENDGRID}.", SENDGRID),
    ("VENDOR_KEY", f"openai _{OPENAI}_ key", OPENAI),
    ("VENDOR_KEY", f"mailgun {MAILGUN}", MAILGUN),
    ("BEARER_TOKEN", f"Authorization: Bearer {BEARER}\r\n", BEARER),
    ("BEARER_TOKEN", f'{{"authorization": "Token {BEARER}"}}', BEARER),
    ("BEARER_TOKEN", f"curl -H 'authorization: bearer {BEARER}' x", BEARER),
    ("BEARER_TOKEN", f"send it as Bearer {BEARER}.", BEARER),
    (
        "CONNECTION_STRING",
        f"DATABASE_URL=postgres://app:{DB_PASSWORD}@db.example.com:5432/app",
        DB_PASSWORD,
    ),
    ("CONNECTION_STRING", f"mongodb+srv://admin:{DB_PASSWORD}@cluster0.example.net/x", DB_PASSWORD),
    ("CONNECTION_STRING", f"redis://:{DB_PASSWORD}@cache:6379/0", DB_PASSWORD),
    ("CONNECTION_STRING", f'"dsn": "mysql://root:{DB_PASSWORD}@127.0.0.1/shop"', DB_PASSWORD),
    ("EMAIL", "markdown _ann@example.com_ emphasis", "ann@example.com"),
    ("SSN", "SSN: 123456789 on file", "123456789"),
    ("SSN", '{"social_security_number": "078051120"}', "078051120"),
    ("SSN", "_123-45-6789_", "123-45-6789"),
    ("PHONE", "tel: 020 7946 0958", "020 7946 0958"),
    ("PHONE", '{"mobile": "0612345678"}', "0612345678"),
    ("PHONE", "call me at 4155550132 today", "4155550132"),
    ("IPV4", "markdown _10.1.2.3_ here", "10.1.2.3"),
    ("IPV4", "range 10.0.0.1-9", "10.0.0.1"),
    ("IPV6", "markdown _2001:db8::7_ here", "2001:db8::7"),
    ("GITHUB_TOKEN", "short ghp_Xa2bC3dEf4gH5iJk6Lm7nN8oP fake", "ghp_Xa2bC3dEf4gH5iJk6Lm7nN8oP"),
    ("JWT", f"markdown _{JWT_HS}_ here", JWT_HS),
    ("URL", "see https://example.com/a?b=c&d=e#f.", "https://example.com/a?b=c&d=e#f"),
    ("URL", "(https://example.com/x)", "https://example.com/x"),
    ("URL", "LOUD HTTP://EXAMPLE.COM/ here", "HTTP://EXAMPLE.COM/"),
    ("URL", "mirror ftp://files.example.org/pub, ok", "ftp://files.example.org/pub"),
    ("URL", "socket wss://chat.example.com/s end", "wss://chat.example.com/s"),
    ("URL", "local http://[::1]:8080/ dev", "http://[::1]:8080/"),
    ("URL", '{"url":"https://example.com/p"}', "https://example.com/p"),
]

NEGATIVES: list[tuple[str, str]] = [
    # Issue 30: versions, MACs, times and colon hashes are not addresses.
    ("IPV4", "Driver Version 31.0.15.3623"),
    ("IPV4", 'AssemblyVersion("1.2.3.4")'),
    ("IPV4", "tool-1.2.3.4.zip"),
    ("IPV4", "ships 1.2.3.4-rc1 today"),
    ("IPV4", "bumped to 2.0.1.5"),
    ("IPV6", "MD5 43:51:43:a1:b5:fc:8b:b7:0a:3a:a9:b1:0f:66:73:a8"),
    ("IPV6", "fingerprint 1a2b:3c4d:5e6f:7a8b:9c0d:1e2f:3a4b:5c6d"),
    ("IPV6", "1a2b:3c4d:5e6f:7a8b:9c0d:1e2f:3a4b:5c6d:7e8f:9a0b"),
    ("IPV6", "00:1a:2b:3c:4d:5e"),
    ("IPV6", "at 12:30:45.123"),
    ("PHONE", "card 3748 0150 9391 4209"),
    ("PHONE", "on 05 03 2024"),
    ("PHONE", "01.02.2024 10:30"),
    ("AWS_SECRET_KEY", "commit 3f786850e387550fdab836ed7e6dc881de23001b"),
    ("AWS_SECRET_KEY", "see com/policyc/policyc/blob/main/Docs/Read"),
    ("SSN", "order 123456789"),
    ("EMAIL", "alice@localhost"),
    ("EMAIL", "bob@@example.com"),
    ("EMAIL", "handle @example.com"),
    ("EMAIL", "carol@example"),
    ("EMAIL", "dave@-example.com"),
    ("EMAIL", "eve@example.c"),
    ("EMAIL", "alice at example dot com"),
    ("SSN", "area 000: 000-12-3456"),
    ("SSN", "area 666: 666-12-3456"),
    ("SSN", "area 9xx: 900-12-3456"),
    ("SSN", "group 00: 123-00-4567"),
    ("SSN", "serial 0000: 123-45-0000"),
    ("SSN", "mixed separators 123-45 6789"),
    ("SSN", "longer 1123-45-6789"),
    ("SSN", "bare 123456789"),
    ("CREDIT_CARD", "luhn fails 4111 1111 1111 1112"),
    ("CREDIT_CARD", "luhn fails 4111111111111112"),
    ("CREDIT_CARD", "luhn fails 5555555555554445"),
    ("CREDIT_CARD", "starts with 1: 1111111111111117"),
    ("CREDIT_CARD", "twenty digits 41111111111111111111"),
    ("CREDIT_CARD", "mixed 4111-1111 1111-1111"),
    ("CREDIT_CARD", "twelve 411111111113"),
    ("CREDIT_CARD", "glued x4111111111111111"),
    ("PHONE", "id 4155550132"),
    ("PHONE", "sum +1 2 3"),
    ("PHONE", "area 123-456-7890"),
    ("PHONE", "exchange 415-055-0132"),
    ("PHONE", "too long +1234567890123456789"),
    ("PHONE", "local 555-0132"),
    ("PHONE", "date 2024-01-15"),
    ("PHONE", "sum 3+14155550132"),
    ("IPV4", "256.1.1.1"),
    ("IPV4", "192.168.1.300"),
    ("IPV4", "leading zero 01.2.3.4"),
    ("IPV4", "three 10.0.0"),
    ("IPV4", "glued a1.2.3.4"),
    ("IPV4", "glued 1.2.3.4a"),
    ("IPV6", "std::vector<int>"),
    ("IPV6", "a:: scope"),
    ("IPV6", "time 12:30:45"),
    ("IPV6", "mac 00:1a:2b:3c:4d:5e"),
    ("IPV6", "just :: alone"),
    ("IPV6", "seven 1:2:3:4:5:6:7"),
    ("IPV6", "gggg::1"),
    ("IPV6", "Foo::1 scope"),
    ("IBAN", "bad checksum DE88 3704 0044 0532 0130 00"),
    ("IBAN", "bad checksum GB82 WEST 1234 5698 7654 33"),
    ("IBAN", "unknown country XX89370400440532013000"),
    ("IBAN", "short for DE: DE89 3704 0044 0532 0130"),
    ("IBAN", "lowercase de89370400440532013000"),
    ("AWS_ACCESS_KEY", f"19 chars AKIA{AWS_ID_BODY[:-1]}"),
    ("AWS_ACCESS_KEY", f"21 chars AKIA{AWS_ID_BODY}X"),
    ("AWS_ACCESS_KEY", f"lower akia{AWS_ID_BODY.lower()}"),
    ("AWS_ACCESS_KEY", f"user id AIDA{AWS_ID_BODY}"),
    ("AWS_ACCESS_KEY", f"glued xAKIA{AWS_ID_BODY}"),
    ("AWS_SECRET_KEY", "aws_secret_access_key=" + "a" * 40),
    ("AWS_SECRET_KEY", f"aws_secret_access_key={AWS_SECRET[:-1]}"),
    ("AWS_SECRET_KEY", f"aws_secret_access_key={AWS_SECRET}K"),
    ("AWS_SECRET_KEY", "aws_secret_access_key: <your secret here>"),
    ("GITHUB_TOKEN", f"ghp_{GH_BODY[:19]}"),
    ("GITHUB_TOKEN", f"ghx_{GH_BODY}"),
    ("GITHUB_TOKEN", f"xghp_{GH_BODY}"),
    ("GITHUB_TOKEN", f"GHP_{GH_BODY}"),
    ("GITHUB_TOKEN", "github" + "_pat_short_one"),
    ("SLACK_TOKEN", "xo" + "xb-123"),
    ("SLACK_TOKEN", "xo" + "xz-1234567890-1234567890123-EXAMPLEexample"),
    ("SLACK_TOKEN", "xo" + "xb-1234567890-short"),
    ("SLACK_TOKEN", "https://hooks." + "slack.com/services/"),
    ("SLACK_TOKEN", "https://hooks.example.com/services/T00000000/B00000000/" + "X" * 24),
    ("STRIPE_KEY", f"publishable pk_live_{STRIPE_BODY}"),
    ("STRIPE_KEY", "sk_live_short"),
    ("STRIPE_KEY", f"sk_prod_{STRIPE_BODY}"),
    ("STRIPE_KEY", f"task_live_{STRIPE_BODY}"),
    ("PRIVATE_KEY", pem("PUBLIC KEY")),
    ("PRIVATE_KEY", pem("CERTIFICATE")),
    ("PRIVATE_KEY", "BEGIN RSA PRIVATE KEY without armour"),
    ("PRIVATE_KEY", "-----BEGIN PRIVATE KEY\nMIIE"),
    ("JWT", "eyJhbGciOiJIUzI1NiJ9 alone"),
    ("JWT", "abc.def.ghi"),
    ("JWT", "eyJ.eyJ.x"),
    ("JWT", f"x{JWT_HS}"),
    ("API_KEY", "api_key=aaaaaaaaaaaaaaaaaaaa"),
    ("API_KEY", "api_key=short"),
    ("API_KEY", f"password={API_VALUE}"),
    ("API_KEY", f"the token for {API_VALUE}"),
    ("API_KEY", f"the token refreshed\nrequest {API_VALUE}"),
    ("SSN", "SSN check failed\norder 123456789 held"),
    ("PHONE", "329 816 9135 bytes"),
    ("PHONE", "total 0108 936 1346 events"),
    ("PHONE", "seq=210-622-9733-1"),
    ("PHONE", "862.720.3440.3"),
    ("IPV4", "## 4.2.1.0"),
    ("IPV4", "upgraded from 2.1.0.5 to 2.1.0.7"),
    ("IPV4", "rev 1.2.3.4"),
    ("IPV4", "Edg/120.0.2210.91"),
    ("IPV4", "setup_1.2.3.4_x64.exe"),
    ("IPV6", "26:f7:ec:12:66:5b:a9:34"),
    ("API_KEY", "tokens_used: 1234567890123456"),
    ("API_KEY", "secret = my-very-long-but-plain"),
    ("GOOGLE_API_KEY", "AI" + "za" + "Sy" + "short"),
    ("GOOGLE_API_KEY", "AI" + "za" + "x" * 36),
    ("GOOGLE_API_KEY", "xAI" + "za" + FILL[:35]),
    ("GOOGLE_API_KEY", "api_key=<your-google-key>"),
    ("VENDOR_KEY", "sk-learn and sk-..."),
    ("VENDOR_KEY", "np" + "m_short"),
    ("VENDOR_KEY", "ke" + "y-value"),
    ("VENDOR_KEY", "gl" + "pat-short"),
    ("BEARER_TOKEN", "Authorization: Bearer <token>"),
    ("BEARER_TOKEN", "Authorization: Bearer YOUR_ACCESS_TOKEN"),
    ("BEARER_TOKEN", "Authorization: Bearer $TOKEN"),
    ("BEARER_TOKEN", "bearer tokens expire after an hour"),
    ("CONNECTION_STRING", "postgres://user:password@localhost/db"),
    ("CONNECTION_STRING", "postgres://app:${DB_PASSWORD}@db.example.com/app"),
    ("CONNECTION_STRING", "postgres://app:****@db.example.com/app"),
    ("CONNECTION_STRING", "postgres://db.example.com:5432/app"),
    ("PRIVATE_KEY", "the file must start with -----BEGIN RSA PRIVATE KEY-----"),
    ("PRIVATE_KEY", "-----BEGIN PRIVATE KEY-----\n-----END PRIVATE KEY-----"),
    ("SSN", "employee id 123456789"),
    ("SSN", "_ref 123456789_"),
    ("PHONE", "order 0612345678 shipped"),
    ("PHONE", "count 4155550132"),
    ("IPV4", "version 1.2.3.4"),
    ("IPV4", "v10.0.0.1"),
    ("IPV4", "P/N 12.34.56.78.90"),
    ("IPV4", "pip install foo==1.2.3.4"),
    ("IPV4", "SKU 10.20.30.40"),
    ("IPV6", "a::b"),
    ("IPV6", "dead::beef"),
    ("EMAIL", "git@github.com:org/repo.git"),
    ("API_KEY", "tokenizer = sentencepiece-unigram-v2"),
    ("URL", "http:// nothing"),
    ("URL", "bare example.com/path"),
    ("URL", "mailto:a@example.com"),
    ("URL", "https:/example.com"),
    ("URL", "xhttps://example.com"),
    ("URL", "file:///etc/passwd"),
]


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [pytest.param(*case, id=f"{case[0]}-{i}") for i, case in enumerate(POSITIVES)],
)
def test_positive_exact_span(name: str, text: str, expected: str) -> None:
    start = text.index(expected)
    assert findings(name, text) == [(start, start + len(expected))]


@pytest.mark.parametrize(
    ("name", "text"),
    [pytest.param(*case, id=f"{case[0]}-{i}") for i, case in enumerate(NEGATIVES)],
)
def test_negative_no_finding(name: str, text: str) -> None:
    assert findings(name, text) == []


@pytest.mark.parametrize("name", sorted(BUILTIN_PATTERNS))
def test_every_pattern_has_enough_examples(name: str) -> None:
    assert sum(1 for case in POSITIVES if case[0] == name) >= 4
    assert sum(1 for case in NEGATIVES if case[0] == name) >= 4


# Near misses that the regex accepts and only the candidate check rejects:
# proof that the check, not the regex, is what stops them.
CHECK_ONLY_MISSES = [
    ("CREDIT_CARD", "4111 1111 1111 1112"),
    ("CREDIT_CARD", "4111111111111112"),
    ("IBAN", "DE88 3704 0044 0532 0130 00"),
    ("IBAN", "XX89370400440532013000"),
    ("API_KEY", "api_key=aaaaaaaaaaaaaaaaaaaa"),
    ("API_KEY", "tokens_used: 1234567890123456"),
    ("AWS_SECRET_KEY", "aws_secret_access_key=" + "a" * 40),
]


@pytest.mark.parametrize(("name", "text"), CHECK_ONLY_MISSES)
def test_check_rejects_what_the_regex_accepts(name: str, text: str) -> None:
    pattern = BUILTIN_PATTERNS[name]
    assert pattern.check is not None
    regex = re2.compile(pattern.source)
    match = regex.search(text)
    assert match is not None and match.group() == text
    value = match.group("value") if "value" in regex.groupindex else text
    assert value
    assert CANDIDATE_CHECKS[pattern.check](value) is False


def test_a_valid_card_inside_a_longer_digit_run_is_not_reported() -> None:
    """Documented limitation: candidates are whole digit runs, never a part of one."""
    assert findings("CREDIT_CARD", "4111111111111111 7") == [(0, 16)]
    assert findings("CREDIT_CARD", "41111111111111117") == []
    assert findings("CREDIT_CARD", "4111 1111 1111 1111 123") == []

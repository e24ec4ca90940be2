"""Writes the labelled detection corpus (``records.jsonl``) from a fixed seed.

Run ``python tests/patterns/corpus/generate.py`` after changing it; the output
is committed so that a change to the corpus shows up in review. Every value is
a random fake of the right shape: none is, or was ever, a real credential.

Each line is one record::

    {"id": "pos-0001", "kind": "positive" | "negative",
     "label": TYPE (positives) or CATEGORY (negatives), "context": CONTEXT,
     "text": "...", "spans": [[start, end, TYPE], ...]}

A positive has exactly the spans that a redactor must replace (the value only:
``api_key=`` and a connection string's host stay); nothing else in its text
is sensitive. A negative has no spans: a redactor must leave it untouched.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable
from pathlib import Path

SEED = 20261201
OUT = Path(__file__).resolve().parent / "records.jsonl"
PER_TYPE = 170
PER_CATEGORY = 48

B62 = string.ascii_letters + string.digits
B64 = B62 + "+/"
HEX = "0123456789abcdef"
UPPER_DIGITS = string.ascii_uppercase + string.digits

rng = random.Random(SEED)
ri = rng.randint


def pick(*options: str) -> str:
    return rng.choice(options)


def rand(alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def mixed(n: int, alphabet: str = B62) -> str:
    """Random text with lowercase, uppercase and digits, as generated keys have."""
    while True:
        s = rand(alphabet, n)
        if (
            any(c.islower() for c in s)
            and any(c.isupper() for c in s)
            and any(c.isdigit() for c in s)
        ):
            return s


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


# --- values -------------------------------------------------------------------

FIRST = [
    "alice",
    "bob",
    "carol",
    "dave",
    "erin",
    "frank",
    "grace",
    "heidi",
    "ivan",
    "judy",
    "mallory",
    "niaj",
    "olivia",
    "peggy",
    "rupert",
    "sybil",
    "trent",
    "victor",
    "wendy",
]
LAST = [
    "smith",
    "jones",
    "garcia",
    "miller",
    "davis",
    "lopez",
    "wilson",
    "moore",
    "taylor",
    "martin",
    "lee",
    "walker",
    "hall",
    "young",
    "king",
    "wright",
    "scott",
    "green",
]
DOMAINS = [
    "example.com",
    "mail.example.org",
    "corp.example.net",
    "acme-widgets.io",
    "northwind.co.uk",
    "contoso.example",
    "globex.com",
    "initech.dev",
    "umbrella.de",
]
HOSTS = [
    "db.internal.example.com",
    "10-0-3-7.prod.example.net",
    "pg-primary.acme.io",
    "mysql.staging.example.org",
    "cluster0.ab12c.mongodb.net",
    "cache.example.com",
    "rabbit.example.net",
    "localhost",
]


def email() -> str:
    local = pick(
        f"{rng.choice(FIRST)}.{rng.choice(LAST)}",
        f"{rng.choice(FIRST)}{ri(1, 99)}",
        f"{rng.choice(FIRST)}_{rng.choice(LAST)}",
        f"{rng.choice(FIRST)}+{pick('news', 'billing', 'test')}",
        f"{rng.choice(FIRST)[0]}{rng.choice(LAST)}",
    )
    return f"{local}@{rng.choice(DOMAINS)}"


def ssn_parts() -> tuple[str, str, str]:
    area = rng.choice([a for a in range(1, 900) if a != 666])
    return f"{area:03d}", f"{ri(1, 99):02d}", f"{ri(1, 9999):04d}"


def luhn_complete(prefix: str, length: int) -> str:
    digits = prefix + rand(string.digits, length - len(prefix) - 1)
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 0:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return digits + str((10 - total % 10) % 10)


def card() -> str:
    kind = rng.randrange(5)
    if kind == 0:
        number = luhn_complete("4", 16)
    elif kind == 1:
        number = luhn_complete(str(ri(51, 55)), 16)
    elif kind == 2:
        number = luhn_complete(str(ri(2221, 2720)), 16)
    elif kind == 3:
        number = luhn_complete(pick("34", "37"), 15)
        sep = pick("", " ", "-")
        return sep.join([number[:4], number[4:10], number[10:]]) if sep else number
    else:
        number = luhn_complete("6011", 16)
    sep = pick("", " ", "-", " ")
    return sep.join(number[i : i + 4] for i in range(0, 16, 4)) if sep else number


def phone_international() -> str:
    area = ri(201, 989)
    exchange = ri(200, 999)
    line = ri(0, 9999)
    return pick(
        f"+1{area}{exchange}{line:04d}",
        f"+1 ({area}) {exchange}-{line:04d}",
        f"+1 {area} {exchange} {line:04d}",
        f"+44 20 {ri(7000, 8999)} {ri(0, 9999):04d}",
        f"+49 30 {ri(100000, 999999)}",
        f"+33 1 {ri(10, 99)} {ri(10, 99)} {ri(10, 99)} {ri(10, 99)}",
        f"+61 2 {ri(1000, 9999)} {ri(1000, 9999)}",
        f"({area}) {exchange}-{line:04d}",
        f"{area}-{exchange}-{line:04d}",
        f"{area}.{exchange}.{line:04d}",
        f"1-{area}-{exchange}-{line:04d}",
    )


def phone_national() -> str:
    return pick(
        f"020 {ri(7000, 8999)} {ri(0, 9999):04d}",
        f"030 {ri(100000, 999999)}",
        f"06{ri(10000000, 99999999)}",
        f"0{ri(1, 9)} {ri(10, 99)} {ri(10, 99)} {ri(10, 99)} {ri(10, 99)}",
        f"07{ri(100, 999)} {ri(100000, 999999)}",
        f"{ri(201, 989)}{ri(200, 999)}{ri(0, 9999):04d}",
    )


def phone_grouped() -> str:
    """National numbers printed in groups, as people write them without a country code."""
    return pick(
        f"020 {ri(7000, 8999)} {ri(0, 9999):04d}",
        f"0{ri(113, 199)} {ri(200, 999)} {ri(0, 9999):04d}",
        f"07{ri(100, 999)} {ri(100000, 999999)}",
        f"0{ri(1, 9)} {ri(10, 99)} {ri(10, 99)} {ri(10, 99)} {ri(10, 99)}",
        f"0{ri(1, 9)}.{ri(10, 99)}.{ri(10, 99)}.{ri(10, 99)}.{ri(10, 99)}",
        f"0{ri(2, 8)} {ri(1000, 9999)} {ri(1000, 9999)}",
        f"04{ri(10, 99)} {ri(100, 999)} {ri(100, 999)}",
        f"089 {ri(1000, 9999)} {ri(100, 9999)}",
    )


def ipv4() -> str:
    first = rng.choice([10, 172, 192, 203, 198, 100, 54, 35, 8, 34, 52, 13])
    return f"{first}.{ri(0, 255)}.{ri(0, 255)}.{ri(1, 254)}"


def ipv6() -> str:
    groups = [f"{ri(0, 0xFFFF):x}" for _ in range(8)]
    kind = rng.randrange(5)
    if kind == 0:
        return ":".join(groups)
    if kind == 1:
        return ":".join(f"{int(g, 16):04x}" for g in groups)
    if kind == 2:
        return f"2001:db8:{groups[2]}::{groups[7]}"
    if kind == 3:
        return f"fe80::{groups[4]}:{groups[5]}:{groups[6]}:{groups[7]}"
    return f"2a00:{groups[1]}:{groups[2]}:{groups[3]}::{groups[6]}:{groups[7]}"


IBAN_BBAN = {
    "DE": (18, string.digits),
    "GB": (18, None),
    "FR": (23, string.digits),
    "NL": (14, None),
    "ES": (20, string.digits),
    "IT": (23, None),
    "CH": (17, string.digits),
}


def iban() -> str:
    country = rng.choice(sorted(IBAN_BBAN))
    length, alphabet = IBAN_BBAN[country]
    if alphabet is None:  # a bank code of letters, then digits
        letters = 1 if country == "IT" else 4
        bban = rand(string.ascii_uppercase, letters) + rand(string.digits, length - letters)
    else:
        bban = rand(alphabet, length)
    numeric = "".join(str(int(c, 36)) for c in bban + country + "00")
    check = 98 - int(numeric) % 97
    compact = f"{country}{check:02d}{bban}"
    if rng.random() < 0.5:
        return compact
    return " ".join(compact[i : i + 4] for i in range(0, len(compact), 4))


def aws_access_key() -> str:
    return pick("AKIA", "AKIA", "ASIA") + rand(string.ascii_uppercase + "234567", 16)


def aws_secret_key() -> str:
    return mixed(40, B64)


def github_token() -> str:
    if rng.random() < 0.2:
        return "github_pat_" + mixed(22) + "_" + mixed(59)
    return pick("ghp_", "ghp_", "gho_", "ghs_", "ghu_", "ghr_") + mixed(36)


def slack_token() -> str:
    kind = rng.randrange(4)
    if kind == 3:
        return (
            "https://hooks.slack.com/services/T"
            + rand(UPPER_DIGITS, 8)
            + "/B"
            + rand(UPPER_DIGITS, 10)
            + "/"
            + mixed(24)
        )
    prefix = pick("xoxb-", "xoxp-", "xoxa-")
    parts = [str(ri(10**9, 10**12)) for _ in range(2 if kind < 2 else 3)]
    return prefix + "-".join(parts) + "-" + mixed(24 if prefix != "xoxp-" else 32)


def stripe_key() -> str:
    return pick("sk_live_", "sk_live_", "rk_live_", "sk_test_") + mixed(rng.choice([24, 32, 99]))


def google_api_key() -> str:
    return "AIza" + mixed(35, B62 + "_-")


def vendor_key() -> str:
    kind = rng.randrange(7)
    if kind == 0:
        return "glpat-" + mixed(20, B62 + "_-")
    if kind == 1:
        return "npm_" + mixed(36)
    if kind == 2:
        return "hf_" + mixed(34)
    if kind == 3:
        return "SG." + mixed(22, B62 + "_-") + "." + mixed(43, B62 + "_-")
    if kind == 4:
        return "sk-" + pick("", "proj-") + mixed(48)
    if kind == 5:
        return "sk-ant-api03-" + mixed(95, B62 + "_-")
    return "key-" + rand(HEX, 32)


def opaque_token() -> str:
    return pick(
        mixed(rng.choice([32, 40, 64])),
        rand(HEX, 40),
        mixed(43, B62 + "-_"),
        rand(HEX, rng.choice([32, 64])),
        mixed(44, B64),
    )


def private_key() -> str:
    label = pick(
        "RSA PRIVATE KEY",
        "PRIVATE KEY",
        "EC PRIVATE KEY",
        "OPENSSH PRIVATE KEY",
        "ENCRYPTED PRIVATE KEY",
    )
    lines = [mixed(64, B64) for _ in range(ri(3, 8))]
    lines.append(mixed(ri(8, 60), B64) + pick("", "=", "=="))
    return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----"


def jwt() -> str:
    header = {"alg": pick("HS256", "RS256", "ES256"), "typ": "JWT"}
    claims = {
        "sub": rand(string.digits, 8),
        "name": rng.choice(FIRST).title(),
        "iat": ri(1_700_000_000, 1_800_000_000),
    }
    signature = bytes(rng.getrandbits(8) for _ in range(32))
    return ".".join(
        [
            b64url(json.dumps(header).encode()),
            b64url(json.dumps(claims).encode()),
            b64url(signature),
        ]
    )


def password() -> str:
    return mixed(ri(12, 24), B62 + "!*-_~")


# --- contexts -----------------------------------------------------------------

# A "piece" is the text around one value: (before, value, after). Contexts
# place a free-text piece in a larger document and say where the value went.
Piece = tuple[str, str, str]

SENTENCES = [
    ("Please update the record: ", "."),
    ("FYI the value is ", " (see ticket)."),
    ("Forwarding ", " as discussed"),
    ("new value -> ", ""),
    ("", " was found in the upload"),
]


def free_piece(value: str) -> Piece:
    before, after = rng.choice(SENTENCES)
    return before, value, after


def render_json(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def ctx_json_log(key: str | None, value: str) -> tuple[str, str]:
    record: dict[str, object] = {
        "ts": f"2026-03-0{ri(1, 9)}T10:22:33Z",
        "level": pick("info", "warn", "error"),
        "service": pick("billing", "auth", "search"),
    }
    if key:
        record[key] = value
    else:
        record["msg"] = "".join(free_piece(value))
    return render_json(record), json.dumps(value)[1:-1]


def ctx_json_in_json(key: str | None, value: str) -> tuple[str, str]:
    inner: dict[str, object] = {key: value} if key else {"note": "".join(free_piece(value))}
    outer = {"event": "tool_result", "body": render_json(inner)}
    return render_json(outer), json.dumps(json.dumps(value)[1:-1])[1:-1]


def ctx_csv(key: str | None, value: str) -> tuple[str, str]:
    cell = f"{key}={value}" if key else value
    name = rng.choice(FIRST).title()
    return (
        f"id,name,field,updated\n{ri(100, 999)},{name},{cell},2026-02-1{ri(0, 9)}\n",
        value,
    )


def ctx_code(key: str | None, value: str) -> tuple[str, str]:
    if key:
        template = pick(
            'config = {{\n    "{k}": "{v}",\n    "timeout": 30,\n}}\n',
            "const {k} = '{v}';\nfetch(url, {{ headers }});\n",
            '{k} = "{v}"  # TODO: move to vault\n',
            'client := NewClient(Options{{ {k}: "{v}" }})\n',
        )
        return template.format(k=key, v=value), value
    before, _, after = free_piece("")
    return f'def notify():\n    send("{before}{value}{after}")\n    return True\n', value


def ctx_config(key: str | None, value: str) -> tuple[str, str]:
    if key:
        template = pick(
            "[default]\n{k} = {v}\nregion = eu-west-1\n",
            "app:\n  {k}: {v}\n  debug: false\n",
            "{K}={v}\nLOG_LEVEL=info\n",
            '{k}: "{v}"\n',
        )
        return template.format(
            k=key, K=key.upper().replace(".", "_").replace("-", "_"), v=value
        ), value
    return f"owner:\n  contact: {value}\n  team: platform\n", value


def ctx_email(key: str | None, value: str) -> tuple[str, str]:
    body = f"{key}: {value}" if key else "".join(free_piece(value))
    return (
        f"Subject: account details\n\nHi {rng.choice(FIRST).title()},\n\n{body}\n\n"
        "Thanks,\nSupport\n"
    ), value


def ctx_chat(key: str | None, value: str) -> tuple[str, str]:
    body = (
        f"{key} = {value}"
        if key
        else pick(f"here you go: {value}", f"try {value} instead", f"{value} 👍", f"is it {value}?")
    )
    return f"[{ri(10, 23)}:{ri(10, 59)}] {rng.choice(FIRST)}: {body}\n", value


def ctx_stack_trace(key: str | None, value: str) -> tuple[str, str]:
    detail = f"{key}={value}" if key else value
    return (
        "Traceback (most recent call last):\n"
        f'  File "/srv/app/handlers.py", line {ri(10, 400)}, in handle\n'
        "    result = client.submit(payload)\n"
        f"app.errors.RejectedError: upstream rejected request ({detail})\n"
    ), value


def ctx_markdown(key: str | None, value: str) -> tuple[str, str]:
    if key:
        return pick(
            f"## Setup\n\nSet `{key}` to `{value}` and restart.\n",
            f"| name | value |\n|---|---|\n| {key} | {value} |\n",
            f"- **{key}**: {value}\n",
        ), value
    return pick(
        f"Contact: _{value}_\n",
        f"**{value}** is the new one\n",
        f"* see `{value}`\n",
        f"| owner | {value} |\n",
        f"> {value}\n",
        f"Value: *{value}*.\n",
    ), value


def ctx_prose(key: str | None, value: str) -> tuple[str, str]:
    if key:
        label = key.replace("_", " ").replace("-", " ").replace(".", " ")
        link = pick("is", "is now", "on file:", "->", "(new):", "is:")
        return (
            f"{pick('The', 'My', 'Our', 'FYI the')} {label} {link} {value}, keep it safe.\n",
            value,
        )
    return pick(
        f"({value})", f"{value}, then", f'"{value}"', f"<{value}>", f"{value};"
    ) + "\n", value


def ctx_xml(key: str | None, value: str) -> tuple[str, str]:
    tag = key.replace(" ", "_") if key else "contact"
    return f'<?xml version="1.0"?>\n<config>\n  <{tag}>{value}</{tag}>\n</config>\n', value


def ctx_shell(key: str | None, value: str) -> tuple[str, str]:
    if key:
        name = key.upper().replace(" ", "_").replace(".", "_").replace("-", "_")
        return pick(f'export {name}="{value}"\n', f"{name}={value} ./run.sh\n"), value
    return f"echo '{value}' >> notes.txt\n", value


def ctx_url_query(key: str | None, value: str) -> tuple[str, str]:
    name = key.replace(" ", "_") if key else "q"
    return f"GET https://api.example.com/v2/lookup?{name}={value}&page=2 HTTP/1.1\n", value


def ctx_sql(key: str | None, value: str) -> tuple[str, str]:
    if key:
        return f"UPDATE settings SET {key.replace(' ', '_')} = '{value}' WHERE id = 7;\n", value
    return f"INSERT INTO notes (body) VALUES ('{value}');\n", value


def ctx_logfmt(key: str | None, value: str) -> tuple[str, str]:
    field = f"{key.replace(' ', '_')}={value}" if key else f'msg="{value}"'
    return f"time=2026-03-01T10:00:00Z level=info {field} service=api\n", value


CONTEXTS: dict[str, Callable[[str | None, str], tuple[str, str]]] = {
    "json_log": ctx_json_log,
    "json_in_json": ctx_json_in_json,
    "csv": ctx_csv,
    "code": ctx_code,
    "config": ctx_config,
    "email": ctx_email,
    "chat": ctx_chat,
    "stack_trace": ctx_stack_trace,
    "markdown": ctx_markdown,
    "prose": ctx_prose,
    "xml": ctx_xml,
    "shell": ctx_shell,
    "url_query": ctx_url_query,
    "sql": ctx_sql,
    "logfmt": ctx_logfmt,
}
# Multi-line values (PEM blocks) do not fit a CSV cell, a shell line or a URL.
ONE_LINE_ONLY = {"csv", "shell", "url_query", "logfmt", "sql", "prose"}

# --- positive types: (value maker, labels it may sit under, or None for bare) ---

LABELS_AWS_SECRET = [
    "aws_secret_access_key",
    "AWS_SECRET_ACCESS_KEY",
    "SecretAccessKey",
    "aws.secret.key",
    "secret_access_key",
]
LABELS_API = [
    "api_key",
    "apiKey",
    "X-API-Key",
    "client_secret",
    "access_token",
    "auth_token",
    "api_secret",
    "secret",
    "token",
    "SERVICE_API_KEY",
    "app_secret",
    "private_token",
    "signing_key",
    "encryption_key",
    "master_key",
    "subscription_key",
    "account_key",
    "shared_secret",
    "secret_key",
]
LABELS_SSN = [
    "ssn",
    "SSN",
    "social_security_number",
    "Social Security No",
    "SSN on file",
    "SSN#",
    "ss#",
    "soc sec no",
    "social",
]
LABELS_PHONE = ["phone", "tel", "mobile", "Phone number", "cell", "call me at"]

TYPES: dict[str, tuple[Callable[[], str], list[str] | None]] = {
    "email": (email, None),
    "ssn": (lambda: "-".join(ssn_parts()) if rng.random() < 0.6 else " ".join(ssn_parts()), None),
    "ssn_bare": (lambda: "".join(ssn_parts()), LABELS_SSN),
    "card": (card, None),
    "phone": (phone_international, None),
    "phone_national": (phone_national, LABELS_PHONE),
    "phone_national_bare": (phone_grouped, None),
    "ipv4": (ipv4, None),
    "ipv6": (ipv6, None),
    "iban": (iban, None),
    "aws_access_key": (aws_access_key, None),
    "aws_secret_key": (aws_secret_key, LABELS_AWS_SECRET),
    "aws_secret_key_bare": (aws_secret_key, None),
    "github_token": (github_token, None),
    "slack_token": (slack_token, None),
    "stripe_key": (stripe_key, None),
    "google_api_key": (google_api_key, None),
    "generic_api_key": (lambda: opaque_token(), LABELS_API),
    "vendor_key": (vendor_key, None),
    "private_key": (private_key, None),
    "jwt": (jwt, None),
}


def positive(type_name: str) -> dict[str, object]:
    make, labels = TYPES[type_name]
    while True:
        value = make()
        key = rng.choice(labels) if labels else None
        names = [c for c in CONTEXTS if not ("\n" in value and c in ONE_LINE_ONLY)]
        context = rng.choice(names)
        text, rendered = CONTEXTS[context](key, value)
        found = record(type_name, context, text, rendered)
        if found is not None:
            return found


def record(type_name: str, context: str, text: str, rendered: str) -> dict[str, object] | None:
    """The labelled record, or None when the value is not found exactly once."""
    start = text.find(rendered)
    if start < 0 or text.find(rendered, start + 1) >= 0:
        return None
    return {
        "kind": "positive",
        "label": type_name,
        "context": context,
        "text": text,
        "spans": [[start, start + len(rendered), type_name]],
    }


def aws_key_pair() -> dict[str, object]:
    """An AWS secret written right after its key id, with no label of its own."""
    while True:
        key_id, secret = aws_access_key(), aws_secret_key()
        joined = key_id + pick(" / ", ",", " ", ":", "\t", " and ")
        context = rng.choice([c for c in CONTEXTS if c != "url_query"])
        text, _ = CONTEXTS[context](pick("", "", "aws creds", "keys"), joined + secret)
        found = record("aws_secret_key_paired", context, text, secret)
        if found is not None and text.count(key_id) == 1:
            start = text.find(key_id)
            spans = found["spans"]
            assert isinstance(spans, list)
            spans.append([start, start + len(key_id), "aws_access_key"])
            return found


def bearer() -> dict[str, object]:
    while (found := _bearer()) is None:
        pass
    return found


def _bearer() -> dict[str, object] | None:
    token = opaque_token()
    scheme = pick("Bearer", "Bearer", "bearer", "Token")
    context = rng.randrange(5)
    if context == 0:
        text = (
            "GET /v1/items HTTP/1.1\nHost: api.example.com\n"
            f"Authorization: {scheme} {token}\nAccept: */*\n"
        )
        ctx = "http"
    elif context == 1:
        text = render_json({"headers": {"Authorization": f"{scheme} {token}", "Accept": "json"}})
        ctx = "json_log"
    elif context == 2:
        text = f"curl -H 'Authorization: {scheme} {token}' https://api.example.com/v1/me\n"
        ctx = "code"
    elif context == 3:
        text = render_json({"body": render_json({"authorization": f"{scheme} {token}"})})
        ctx = "json_in_json"
    else:
        text = f'requests.get(url, headers={{"authorization": "{scheme} {token}"}})\n'
        ctx = "code"
    return record("bearer_token", ctx, text, token)


def connection_string() -> dict[str, object]:
    while (found := _connection_string()) is None:
        pass
    return found


def _connection_string() -> dict[str, object] | None:
    secret = password()
    user = pick("app", "admin", "svc_billing", "readonly", "root")
    host = rng.choice(HOSTS)
    kind = rng.randrange(6)
    if kind == 0:
        url = f"postgres://{user}:{secret}@{host}:5432/app"
    elif kind == 1:
        url = f"postgresql://{user}:{secret}@{host}/orders?sslmode=require"
    elif kind == 2:
        url = f"mysql://{user}:{secret}@{host}:3306/shop"
    elif kind == 3:
        url = f"mongodb+srv://{user}:{secret}@{host}/test?retryWrites=true"
    elif kind == 4:
        url = f"redis://:{secret}@{host}:6379/0"
    else:
        url = f"amqp://{user}:{secret}@{host}:5672/%2f"
    key = pick("DATABASE_URL", "db_url", "dsn", "connection")
    context = rng.choice(["config", "json_log", "code", "stack_trace", "chat", "json_in_json"])
    text, _ = CONTEXTS[context](key, url)
    rendered = secret if context != "json_log" else json.dumps(secret)[1:-1]
    if context == "json_in_json":
        rendered = json.dumps(json.dumps(secret)[1:-1])[1:-1]
    # The password only: user, host, port and database stay readable.
    return record("connection_string", context, text, rendered)


# --- negatives ------------------------------------------------------------------


def uuid() -> str:
    h = rand(HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{pick('8', '9', 'a', 'b')}{h[17:20]}-{h[20:]}"


def luhn_failing() -> str:
    good = luhn_complete(pick("4", "51", "6011", "37"), 16)
    bad = good[:-1] + str((int(good[-1]) + ri(1, 9)) % 10)
    sep = pick("", " ", "-")
    return sep.join(bad[i : i + 4] for i in range(0, 16, 4)) if sep else bad


def isbn() -> str:
    core = "978" + rand(string.digits, 9)
    total = sum(int(c) * (1 if i % 2 == 0 else 3) for i, c in enumerate(core))
    full = core + str((10 - total % 10) % 10)
    return pick(
        f"ISBN {full[:3]}-{full[3]}-{full[4:7]}-{full[7:12]}-{full[12]}",
        f"ISBN-13: {full}",
        f"isbn {full}",
    )


def tracking() -> str:
    return pick(
        "1Z" + rand(UPPER_DIGITS, 16),
        "tracking " + rand(string.digits, 12),
        "USPS " + "9400" + rand(string.digits, 18),
        "DHL JJD" + rand(string.digits, 18),
    )


def version() -> str:
    return pick(
        f"pip install requests=={ri(1, 9)}.{ri(0, 30)}.{ri(0, 9)}.{ri(0, 9)}",
        f"npm i left-pad@{ri(1, 9)}.{ri(0, 30)}.{ri(0, 9)}.{ri(0, 9)}",
        f"the release notes for {ri(1, 9)}.{ri(0, 9)}.{ri(0, 9)}.{ri(0, 9)} say",
        f"version {ri(1, 12)}.{ri(0, 20)}.{ri(0, 50)}.{ri(0, 9999)}",
        f"v{ri(1, 12)}.{ri(0, 20)}.{ri(0, 50)}.{ri(0, 200)}",
        f"Chrome/{ri(100, 130)}.0.{ri(1000, 6999)}.{ri(10, 200)}",
        f"build {ri(1, 10)}.{ri(0, 30)}.{ri(0, 999)}.{ri(1, 999)}",
        f"kernel {ri(3, 6)}.{ri(0, 19)}.{ri(0, 300)}-{ri(1, 999)}.el8",
        f"Windows 10.0.{ri(10000, 22999)}.{ri(100, 3000)}",
        f"firmware {ri(1, 9)}.{ri(0, 9)}.{ri(0, 99)}.{ri(0, 99)}",
        f"==> package@{ri(1, 9)}.{ri(0, 30)}.{ri(0, 30)}",
        f"release {ri(2019, 2026)}.{ri(1, 12)}.{ri(1, 28)}.{ri(1, 9)}",
        f"Version: {ri(1, 9)}.{ri(0, 9)}.{ri(0, 9)}.{ri(0, 9)}",
    )


def part_number() -> str:
    parts = [str(ri(1, 250)) for _ in range(ri(5, 7))]
    return pick(
        "P/N " + ".".join(parts),
        "part " + ".".join(parts),
        "OID " + ".".join(["1", "3", "6", "1", "4", "1", *parts[:3]]),
        "section " + ".".join(parts[:5]),
        "SKU " + ".".join(f"{int(p):03d}" for p in parts[:4]),
    )


def colons() -> str:
    return pick(
        "std::vector<std::string>",
        "Foo::Bar::baz()",
        "std::io::Result<()>",
        "crate::config::load",
        f"{ri(0, 23):02d}:{ri(0, 59):02d}:{ri(0, 59):02d}",
        ":".join(rand(HEX, 2) for _ in range(6)),
        "arn:aws:iam::" + rand(string.digits, 12) + ":role/deploy",
        "a::b",
        "Module::Sub::method",
        "::before ::after",
    )


def date() -> str:
    y, m, d = ri(2000, 2030), ri(1, 12), ri(1, 28)
    return pick(
        f"{y}-{m:02d}-{d:02d}",
        f"{m:02d}/{d:02d}/{y}",
        f"{y}-{m:02d}-{d:02d}T{ri(0, 23):02d}:00:00Z",
        f"{d:02d}.{m:02d}.{y}",
        f"{y}{m:02d}{d:02d}",
        f"{y}-{m:02d}-{d:02d} 14:{ri(10, 59)}:05.123",
    )


def hash_hex() -> str:
    return pick(
        "sha256:" + rand(HEX, 64),
        "md5 " + rand(HEX, 32),
        'etag "' + rand(HEX, 40) + '"',
        "checksum=" + rand(HEX, 64),
        "sha1 " + rand(HEX, 40),
    )


def git_sha() -> str:
    return pick("commit " + rand(HEX, 40), "merged " + rand(HEX, 7), "rev " + rand(HEX, 12))


def placeholder() -> str:
    return pick(
        "api_key=<your-api-key>",
        "API_KEY=YOUR_API_KEY_HERE",
        'token: "<token>"',
        "Authorization: Bearer <token>",
        "Authorization: Bearer YOUR_ACCESS_TOKEN",
        "api_key=xxxxxxxxxxxxxxxxxxxxxxxx",
        "secret = 'changeme'",
        "password: ********",
        "aws_secret_access_key = <your secret here>",
        "client_secret=REPLACE_ME",
        "sk_live_...",
        "ghp_...",
        "AKIA...",
        "api_key: your-api-key-goes-here",
        "token=TOKEN_GOES_HERE",
        "postgres://user:password@localhost/db",
        "Authorization: Bearer ${TOKEN}",
        "api_key=XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
    )


def masked() -> str:
    return pick(
        "card ****" + rand(string.digits, 4),
        "xxxx-xxxx-xxxx-" + rand(string.digits, 4),
        "ssn ***-**-" + rand(string.digits, 4),
        "[REDACTED]",
        "sk_live_****" + rand(B62, 4),
        "api_key=****************",
        "token: [hidden]",
        "j***@" + rng.choice(DOMAINS).split(".")[0],
        "AKIA************",
        "phone +1 (***) ***-" + rand(string.digits, 4),
        "Authorization: Bearer ****",
        "postgres://app:****@db.example.com/app",
    )


def env_ref() -> str:
    return pick(
        "${AWS_SECRET_ACCESS_KEY}",
        "$GITHUB_TOKEN",
        'os.environ["STRIPE_API_KEY"]',
        "process.env.API_KEY",
        "{{ secrets.NPM_TOKEN }}",
        "api_key: ${API_KEY}",
        "Authorization: Bearer $TOKEN",
        "postgres://app:${DB_PASSWORD}@db.example.com/app",
        "token = os.getenv('SLACK_BOT_TOKEN')",
        "secret: !vault |",
        "client_secret=${CLIENT_SECRET}",
        "aws_secret_access_key = %(AWS_SECRET)s",
        "password=$(cat /run/secrets/db)",
    )


def pem_header() -> str:
    label = pick("RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY")
    return pick(
        f"the file must start with -----BEGIN {label}-----",
        f"-----BEGIN {label}-----",
        f"-----BEGIN {label}-----\n-----END {label}-----",
        f"expected '-----BEGIN {label}-----' header",
        f'if line.startswith("-----BEGIN {label}-----"):',
        f"-----BEGIN {label}-----\n<paste your key here>\n-----END {label}-----",
    )


def public_material() -> str:
    body = "\n".join(mixed(64, B64) for _ in range(3))
    return pick(
        f"-----BEGIN CERTIFICATE-----\n{body}\n-----END CERTIFICATE-----",
        f"-----BEGIN PUBLIC KEY-----\n{body}\n-----END PUBLIC KEY-----",
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + mixed(43) + " deploy@ci-runner",
        "pk_live_" + mixed(24),
    )


def luhn_free_numbers() -> str:
    return pick(
        f"order #{ri(10**8, 10**9)}",
        f"INV-{ri(2020, 2026)}-{ri(0, 999999):06d}",
        f"employee id {ri(10**8, 10**9 - 1)}",
        f"account {ri(10**9, 10**10)}",
        f"zip {ri(10000, 99999)}-{ri(1000, 9999)}",
        f"ticket {ri(2020, 2026)}-{ri(0, 999999):06d}",
    )


def amounts() -> str:
    return pick(
        f"${ri(1, 999)},{ri(100, 999)},{ri(100, 999)}.{ri(10, 99)}",
        f"{ri(1000000, 99999999)}.{ri(10, 99)} EUR",
        f"{rng.random() * 1e6:.6e}",
        f"total: {ri(10**6, 10**9)} bytes",
        f"lat {rng.uniform(-90, 90):.6f}, lon {rng.uniform(-180, 180):.6f}",
    )


def ssn_like() -> str:
    return pick(
        f"000-{ri(10, 99)}-{ri(1000, 9999)}",
        f"666-{ri(10, 99)}-{ri(1000, 9999)}",
        f"9{ri(10, 99)}-{ri(70, 99)}-{ri(1000, 9999)}",
        f"case {ri(100, 899)}-{ri(10, 99)}-{ri(10000, 99999)}",
        f"ref {ri(100000000, 999999999)}",
    )


def iban_like() -> str:
    compact = iban().replace(" ", "")
    broken = compact[:2] + f"{(int(compact[2:4]) + ri(1, 50)) % 97 + 2:02d}" + compact[4:]
    return pick(broken, "GB00 TEST 0000 0000 0000 00", "XX12" + rand(string.digits, 18))


def base64_blob() -> str:
    return pick(
        "data:image/png;base64,iVBORw0KGgo" + rand(B64, 80),
        "content-md5: " + base64.b64encode(bytes(rng.getrandbits(8) for _ in range(16))).decode(),
        "nonce=" + rand(B64, 24),
        "avatar: " + mixed(120, B64),
    )


def identifiers() -> str:
    return pick(
        "req_" + mixed(24),
        "cus_" + mixed(14),
        "msg_" + mixed(20),
        "evt_" + mixed(24),
        "pi_" + mixed(24),
        "trace_id=" + rand(HEX, 32),
        "#" + rand(HEX, 6),
        "i-" + rand(HEX, 17),
        "sg-" + rand(HEX, 17),
        "ami-" + rand(HEX, 17),
    )


def email_like() -> str:
    return pick(
        "@" + rng.choice(FIRST),
        rng.choice(FIRST) + "@localhost",
        "npm i @scope/pkg@1.2.3",
        "git@github.com:org/repo.git",
        "user at example dot com",
        "name@@example.com",
        "docker.io/library/nginx@sha256:" + rand(HEX, 64),
    )


def jwt_like() -> str:
    return pick(
        "eyJhbGciOiJIUzI1NiJ9",
        "eyJ0eXAiOiJKV1QifQ (header only)",
        "abc.def.ghi",
        "config.eyJ.json",
        "file.min.js.map",
    )


def url_without_credentials() -> str:
    return pick(
        f"postgres://{rng.choice(HOSTS)}:5432/app",
        "redis://localhost:6379/0",
        "https://api.example.com/v1/items?page=2",
        "mongodb://db1.example.net,db2.example.net/app",
        "amqp://rabbit.example.net:5672/%2f",
        "https://example.com/reset?token_type=bearer",
    )


def phone_like() -> str:
    return pick(
        f"ext. {ri(1000, 9999)}",
        f"room {ri(100, 999)}-{ri(1, 9)}",
        f"count {ri(10**9, 10**10)}",
        f"+{ri(1, 9)} {ri(1, 9)}",
        f"SKU {ri(100, 999)}-{ri(1000, 9999)}-{ri(10, 99)}",
        f"id {ri(2000000000, 9999999999)}",
    )


def low_entropy_label() -> str:
    return pick(
        "token_count: 1234567890123456",
        "secret = my-very-long-but-plain-words",
        "api_key_name: production-billing-key",
        "access_token_expires_in=3600000000000",
        "token_type: bearer",
        "secret_name=prod/database/password",
        "auth_token_ttl = 86400",
        "client_secret_expires_at: 1767225600",
        "tokenizer = sentencepiece-unigram-v2",
    )


def version_in_context() -> str:
    a, b, c, d = ri(1, 12), ri(0, 30), ri(0, 99), ri(0, 9999)
    return pick(
        f"Driver Version {a}.{b}.{c}.{d}",
        f"FileVersion={a}.{b}.{c}.{d}",
        f'appVersion: "{a}.{b}.{c}.{d}"',
        f"tool-{a}.{b}.{c}.{d}.zip",
        f"Release {a}.{b}.{c}.{d}.{ri(1, 99)}",
        f"bumped to {a}.{b}.{c}.{d}",
        f"dotnet runtime {a}.{b}.{c}.{d}",
        f"build=10.0.{ri(0, 255)}.{ri(1, 254)}",
        f"ver. {a}.{b}.{c}.{d}",
        f"({a}.{b}.{c}.{d}-rc{ri(1, 5)})",
    )


def mac_address() -> str:
    octets = [rand(HEX, 2) for _ in range(6)]
    return pick(
        ":".join(octets),
        ":".join(octets).upper(),
        "-".join(octets).upper(),
        f"link/ether {':'.join(octets)} brd ff:ff:ff:ff:ff:ff",
        f"{''.join(octets[:2])}.{''.join(octets[2:4])}.{''.join(octets[4:])}",
    )


def clock_time() -> str:
    h, m, s = ri(0, 23), ri(0, 59), ri(0, 59)
    return pick(
        f"{h:02d}:{m:02d}:{s:02d}",
        f"elapsed {h:02d}:{m:02d}:{s:02d}.{ri(0, 999999):06d}",
        f"{ri(1, 30)}:{h:02d}:{m:02d}:{s:02d} uptime",
        f"aspect {ri(1, 21)}:{ri(1, 9)}",
        f"John {ri(1, 21)}:{ri(1, 40)}",
        f"{h:02d}:{m:02d}:{s:02d}:{ri(0, 99):02d} timecode",
    )


def colon_hash() -> str:
    return pick(
        "MD5 " + ":".join(rand(HEX, 2) for _ in range(16)),
        "SHA256 Fingerprint=" + ":".join(rand("0123456789ABCDEF", 2) for _ in range(32)),
        "fingerprint " + ":".join(rand(HEX, 4) for _ in range(ri(9, 16))),
        "pin-sha1 " + ":".join(rand(HEX, 2) for _ in range(20)),
        "gpg " + ":".join(rand("0123456789ABCDEF", 4) for _ in range(10)),
    )


def hex_after_label() -> str:
    return pick(
        "request_id=" + rand(HEX, 32),
        "span: " + rand(HEX, 16),
        "content_sha256: " + rand(HEX, 64),
        "digest = " + rand(HEX, 40),
        "object_key: uploads/" + rand(HEX, 32) + ".png",
        "blob " + rand(HEX, 40),
        "key_id: " + rand(string.digits, 8),
    )


NEGATIVES: dict[str, Callable[[], str]] = {
    "version_in_context": version_in_context,
    "mac_address": mac_address,
    "clock_time": clock_time,
    "colon_hash": colon_hash,
    "hex_after_label": hex_after_label,
    "uuid": uuid,
    "hash": hash_hex,
    "git_sha": git_sha,
    "version": version,
    "part_number": part_number,
    "double_colon": colons,
    "date": date,
    "luhn_failing": luhn_failing,
    "isbn": isbn,
    "tracking_number": tracking,
    "placeholder": placeholder,
    "masked": masked,
    "env_var_ref": env_ref,
    "pem_header_no_body": pem_header,
    "public_key_material": public_material,
    "order_number": luhn_free_numbers,
    "amount": amounts,
    "ssn_like": ssn_like,
    "iban_like": iban_like,
    "base64_blob": base64_blob,
    "identifier": identifiers,
    "email_like": email_like,
    "jwt_like": jwt_like,
    "url_without_credentials": url_without_credentials,
    "phone_like": phone_like,
    "low_entropy_label": low_entropy_label,
}

NEGATIVE_CONTEXTS = [
    "json_log",
    "json_in_json",
    "code",
    "config",
    "email",
    "chat",
    "stack_trace",
    "markdown",
    "prose",
    "xml",
    "sql",
    "logfmt",
]


def negative(category: str) -> dict[str, object]:
    value = NEGATIVES[category]()
    context = rng.choice(NEGATIVE_CONTEXTS)
    text, _ = CONTEXTS[context](None, value)
    return {"kind": "negative", "label": category, "context": context, "text": text, "spans": []}


# --- round 2 of issue 30: the outside measurement's shapes in new contexts ------
#
# Appended after everything above (the same seeded stream, so the records
# above keep their text and ids). Labels are written the ways documents write
# them: a CSV header above the value, a camelCase JSON key, an UPPER_SNAKE
# variable, a compound name (patient_ssn, webhookSecret), a markdown bold
# label or table cell, "Label - value" in a ticket.

ROUND2_PER_TYPE = 120
ROUND2_PER_CATEGORY = 60


def _words(label: str) -> list[str]:
    return label.replace("_", " ").replace("-", " ").split()


def _snake(label: str) -> str:
    return "_".join(w.lower() for w in _words(label))


def _camel(label: str) -> str:
    words = _words(label)
    return words[0].lower() + "".join(w[:1].upper() + w[1:].lower() for w in words[1:])


def _title(label: str) -> str:
    return " ".join(w if w.isupper() else w.title() for w in _words(label))


def _r2_csv_header(label: str | None, value: str) -> str:
    head = _title(label) if label else pick("Notes", "Value", "Detail")
    name = rng.choice(FIRST).title()
    return pick(
        f"id,name,{head},status\n{ri(1, 99)},{name},{value},active\n",
        f"{head}\tname\n{value}\t{name}\n",
        f'"name","{head}"\n"{name}","{value}"\n',
    )


def _r2_json_camel(label: str | None, value: str) -> str:
    key = _camel(label) if label else "detail"
    return render_json({"data": {key: value, "id": ri(1, 999)}})


def _r2_env(label: str | None, value: str) -> str:
    key = _snake(label).upper() if label else "EXTRA"
    return pick(f"{key}={value}\nDEBUG=0\n", f"export {key}='{value}'\n")


def _r2_yaml(label: str | None, value: str) -> str:
    key = _snake(label) if label else "detail"
    return f'profile:\n  owner: {rng.choice(FIRST)}\n  {key}: "{value}"\n'


def _r2_markdown(label: str | None, value: str) -> str:
    if label is None:
        return pick(f"* {value}\n", f"1. `{value}`\n")
    return pick(
        f"**{_title(label)}:** {value}\n",
        f"**{_title(label)}**: `{value}`\n",
        f"| {_title(label)} | {value} |\n",
        f"- {_title(label)}: `{value}`\n",
    )


def _r2_ticket(label: str | None, value: str) -> str:
    if label is None:
        return f"Case {ri(1000, 9999)}: customer pasted {value} into the form.\n"
    return pick(
        f"Case {ri(1000, 9999)}\n{_title(label)} - {value}\n",
        f"Case {ri(1000, 9999)}: the {label.lower()} we have is {value}\n",
        f"{_title(label)} (verified) {value}\n",
    )


def _r2_log(label: str | None, value: str) -> str:
    field = f"{_snake(label)}={value}" if label else f'detail="{value}"'
    return f"ts=2026-04-0{ri(1, 9)}T08:00:00Z lvl=warn {field} worker={ri(1, 9)}\n"


def _r2_escaped(label: str | None, value: str) -> str:
    key = _camel(label) if label else "detail"
    return render_json({"result": render_json({key: value})})


ROUND2_CONTEXTS: dict[str, Callable[[str | None, str], str]] = {
    "csv_header": _r2_csv_header,
    "json_camel": _r2_json_camel,
    "env": _r2_env,
    "yaml": _r2_yaml,
    "markdown_label": _r2_markdown,
    "ticket": _r2_ticket,
    "logfmt_snake": _r2_log,
    "json_in_json_camel": _r2_escaped,
}

R2_SSN_LABELS = [
    "ssn",
    "SSN",
    "employee SSN",
    "member_ssn",
    "borrower SSN",
    "SSN (primary)",
    "SS number",
    "ss num",
    "social security",
    "social security nbr",
    "TIN / SSN",
    "soc sec #",
    "spouse ssn",
]
R2_KEY_LABELS = [
    "api key",
    "api-key",
    "API_KEY",
    "x-api-key",
    "app key",
    "app secret",
    "auth key",
    "authentication key",
    "consumer key",
    "consumer secret",
    "client secret",
    "client key",
    "access token",
    "refresh token",
    "private token",
    "secret token",
    "webhook secret",
    "hmac key",
    "hmac secret",
    "session secret",
    "signing secret",
    "secret key",
    "api token",
    "bot token",
    "integration key",
    "developer key",
]
R2_PHONE_LABELS = [
    None,
    None,
    None,
    "phone",
    "home phone",
    "work tel",
    "mobile no",
    "contact number",
]


def r2_phone_national() -> str:
    """Numbers without a country code, in the ways people print them."""
    npa, nxx, line = ri(201, 989), ri(200, 999), ri(0, 9999)
    return pick(
        f"({npa}){nxx}-{line:04d}",
        f"{npa} {nxx} {line:04d}",
        f"({npa}) {nxx} {line:04d}",
        f"(0{ri(2, 8)}) {ri(1000, 9999)} {ri(1000, 9999)}",
        f"(0{ri(20, 99)}) {ri(100, 999)} {ri(1000, 9999)}",
        f"(0{ri(113, 199)}) {ri(200, 999)} {ri(1000, 9999)}",
        f"(030) {ri(1000000, 99999999)}",
        f"0{ri(20, 99)}-{ri(1000000, 9999999)}",
        f"0{ri(151, 179)} {ri(1000000, 99999999)}",
        f"07{ri(100, 999)} {ri(100, 999)} {ri(100, 999)}",
        f"0{ri(1, 9)} {ri(10, 99)} {ri(10, 99)} {ri(10, 99)} {ri(10, 99)}",
    )


def r2_generic_key() -> str:
    return pick(
        rand(HEX, 32),
        rand(HEX, 40),
        rand(HEX, 64),
        rand(HEX.upper(), 40),
        mixed(24),
        mixed(36),
        mixed(50, B62 + "-_"),
        mixed(30, B64) + "==",
        mixed(43, B64) + "=",
    )


ROUND2_TYPES: dict[str, tuple[Callable[[], str], list[str | None]]] = {
    "ssn_labelled_r2": (lambda: "".join(ssn_parts()), list(R2_SSN_LABELS)),
    "generic_api_key_r2": (r2_generic_key, list(R2_KEY_LABELS)),
    "phone_national_r2": (r2_phone_national, R2_PHONE_LABELS),
    "aws_secret_key_r2": (
        aws_secret_key,
        [None, None, "aws secret access key", "secret access key"],
    ),
}


def _r2_rendered(context: str, value: str) -> str:
    if context in ("json_camel",):
        return json.dumps(value)[1:-1]
    if context == "json_in_json_camel":
        return json.dumps(json.dumps(value)[1:-1])[1:-1]
    return value


def round2_positive(type_name: str) -> dict[str, object]:
    make, labels = ROUND2_TYPES[type_name]
    while True:
        value, label = make(), rng.choice(labels)
        context = rng.choice(sorted(ROUND2_CONTEXTS))
        key_id = ""
        if type_name == "aws_secret_key_r2" and label is None and rng.random() < 0.5:
            key_id = aws_access_key()
            text = ROUND2_CONTEXTS[context](None, key_id + pick(",", ";", " ", "\t") + value)
        else:
            text = ROUND2_CONTEXTS[context](label, value)
        found = record(type_name, context, text, _r2_rendered(context, value))
        if found is None:
            continue
        if key_id:
            if text.count(key_id) != 1:
                continue
            start = text.find(key_id)
            spans = found["spans"]
            assert isinstance(spans, list)
            spans.append([start, start + len(key_id), "aws_access_key"])
        return found


def r2_version_bare() -> str:
    a, b, c, d = ri(1, 20), ri(0, 12), ri(0, 40), ri(0, 255)
    return pick(
        f"### {a}.{b}.{c}.{d}",
        f"# Release notes {a}.{b}.{c}.{d}",
        f"Upgrade from {a}.{b}.{c}.{d} to {a}.{b}.{c + 1}.0",
        f"updated to {a}.{b}.{c}.{d} last night",
        f"rev {a}.{b}.{c}.{d}",
        f"revision {a}.{b}.{c}.{d}",
        f"patch {a}.{b}.{c}.{d}",
        f"hotfix {a}.{b}.{c}.{d}",
        f"Installed {a}.{b}.{c}.{d}",
        f"setup_{a}.{b}.{c}.{d}_x64.exe",
        f"ProductVersion {a}.{b}.{c}.{d}",
        f"Edg/{ri(100, 130)}.0.{ri(1000, 2999)}.{ri(10, 99)}",
        f"package version {a}.{b}.{c}.{d}",
    )


def r2_counter() -> str:
    return pick(
        f"{ri(1, 9)} {ri(100, 999)} {ri(100, 999)} {ri(100, 999)} records",
        f"{ri(100, 999)} {ri(100, 999)} {ri(1000, 9999)} bytes",
        f"total 0{ri(100, 999)} {ri(100, 999)} {ri(1000, 9999)} events",
        f"seq={ri(200, 999)}-{ri(200, 999)}-{ri(1000, 9999)}-{ri(1, 99)}",
        f"{ri(200, 999)}.{ri(200, 999)}.{ri(1000, 9999)}.{ri(1, 9)}",
        f"run {ri(2000000000, 9999999999)}",
        f"processed {ri(1, 9)},{ri(100, 999)},{ri(100, 999)} items",
        f"offset {ri(100000000, 999999999)}",
    )


def r2_build_id() -> str:
    return pick(
        f"build {ri(2020, 2026)}.{ri(1, 12)}.{ri(1, 28)}.{ri(1, 99)}",
        f"Build-Id: {rand(HEX, 16)}",
        f"ci job #{ri(100000, 9999999)}",
        f"BUILD_NUMBER={ri(1000, 99999)}",
        f"image: registry/app:{rand(HEX, 7)}",
        f"version-code {ri(10000000, 99999999)}",
    )


def r2_timestamp() -> str:
    y, mo, d = ri(2020, 2026), ri(1, 12), ri(1, 28)
    h, mi, s = ri(0, 23), ri(0, 59), ri(0, 59)
    return pick(
        f"{y}-{mo:02d}-{d:02d} {h:02d}:{mi:02d}:{s:02d},{ri(0, 999):03d}",
        f"{d:02d}/{mo:02d}/{y} {h:02d}:{mi:02d}",
        f"@{ri(1_600_000_000, 1_800_000_000)}",
        f"{y}{mo:02d}{d:02d}T{h:02d}{mi:02d}{s:02d}Z",
        f"time_ms={ri(1_600_000_000_000, 1_800_000_000_000)}",
        f"{h:02d}:{mi:02d}:{s:02d}:{ri(0, 999):03d}",
    )


def r2_hash_in_url() -> str:
    return pick(
        f"https://static.example.com/js/app-{rand(HEX, 16)}.js",
        f"https://github.com/acme/app/commit/{rand(HEX, 40)}",
        f"https://example.com/dl?md5={rand(HEX, 32)}",
        f"ghcr.io/acme/app@sha256:{rand(HEX, 64)}",
        f"https://img.example.org/{rand(HEX, 2)}/{rand(HEX, 32)}.jpg",
    )


def r2_colon_sequence() -> str:
    return pick(
        ":".join(rand(HEX, 2) for _ in range(ri(7, 20))),
        ":".join(rand(HEX.upper(), 2) for _ in range(ri(7, 20))),
        ":".join(rand(HEX, 4) for _ in range(8)),
        "-p " + ":".join(str(ri(1000, 9999)) for _ in range(3)),
        "levels " + ":".join(str(ri(0, 99)) for _ in range(ri(4, 7))),
        "node:" + ":".join(rand(string.ascii_lowercase, 4) for _ in range(3)),
        f"{ri(1, 9)}:{ri(10, 99)}:{ri(10, 99)}:{ri(10, 99)}:{ri(100, 999)}",
    )


def r2_zip4() -> str:
    return pick(
        f"Portland, OR {ri(97000, 97299)}-{ri(1000, 9999)}",
        f"ZIP+4 {ri(10000, 99999)}-{ri(1000, 9999)}",
        f"postal_code: {ri(10000, 99999)}-{ri(1000, 9999)}",
    )


def r2_order() -> str:
    return pick(
        f"order {ri(100, 999)}-{ri(1000000, 9999999)}-{ri(1000000, 9999999)}",
        f"Order #{ri(100000000, 999999999)}",
        f"ticket {ri(100000000, 999999999)}",
        f"account {ri(1000000000, 9999999999)}",
        f"ref. {ri(100, 999)}-{ri(10, 99)}-{ri(1000, 9999)}-A",
    )


def r2_keyword_then_line() -> str:
    """A key or SSN word in prose, then a line with an identifier: no header, no value."""
    return pick(
        f"the token expired\nrequest_id={rand(HEX, 32)}",
        f"SSN check failed for the applicant\norder {ri(100000000, 999999999)} held",
        f"api key rotated by {rng.choice(FIRST)}\ncommit {rand(HEX, 40)}",
        f"client secret was reset; see below\ntrace {mixed(32)}",
        f"Social security office visit\nbooking {ri(100000000, 999999999)}",
    )


ROUND2_NEGATIVES: dict[str, Callable[[], str]] = {
    "keyword_then_line_r2": r2_keyword_then_line,
    "version_bare_r2": r2_version_bare,
    "counter_r2": r2_counter,
    "build_id_r2": r2_build_id,
    "timestamp_r2": r2_timestamp,
    "hash_in_url_r2": r2_hash_in_url,
    "colon_sequence_r2": r2_colon_sequence,
    "zip4_r2": r2_zip4,
    "order_number_r2": r2_order,
}


def round2_negative(category: str) -> dict[str, object]:
    context = rng.choice(sorted(ROUND2_CONTEXTS))
    text = ROUND2_CONTEXTS[context](None, ROUND2_NEGATIVES[category]())
    return {"kind": "negative", "label": category, "context": context, "text": text, "spans": []}


def main() -> None:
    records: list[dict[str, object]] = []
    for type_name in TYPES:
        records.extend(positive(type_name) for _ in range(PER_TYPE))
    records.extend(bearer() for _ in range(PER_TYPE))
    records.extend(aws_key_pair() for _ in range(PER_TYPE))
    records.extend(connection_string() for _ in range(PER_TYPE))
    for category in NEGATIVES:
        records.extend(negative(category) for _ in range(PER_CATEGORY))
    for type_name in ROUND2_TYPES:
        records.extend(round2_positive(type_name) for _ in range(ROUND2_PER_TYPE))
    for category in ROUND2_NEGATIVES:
        records.extend(round2_negative(category) for _ in range(ROUND2_PER_CATEGORY))
    with OUT.open("w", encoding="utf-8") as out:
        for number, rec in enumerate(records, 1):
            rec = {"id": f"{rec['kind'][:3]}-{number:04d}", **rec}
            out.write(json.dumps(rec, ensure_ascii=False) + "\n")
    print(f"wrote {len(records)} records to {OUT}")


if __name__ == "__main__":
    main()

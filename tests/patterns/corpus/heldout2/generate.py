"""Writes the SECOND held-out detection split (``heldout2.jsonl``) from its own seed.

Why a second one: the first held-out split (``../heldout/``) was scored and
its misses were read and written down, so it can no longer tell whether a
change generalises. This split was written, frozen and scored once on the
patterns of the day *before* the second round of issue 30 touched any
pattern, check or keyword list. It shares no code, vocabulary, templates or
seed with ``../generate.py`` (the tuning split) or ``../heldout/generate.py``.
Nobody may tune against it: its test (``test_pack_corpus.py``) is a floor
against regressions. Changing this file resets that promise: say so in review.

Record format as in ``../generate.py``: ``kind``, ``label``, ``context``,
``text`` and ``spans`` (the characters a redactor must replace: the value
only, never its label). Every value is a random fake of the right shape.

A label is given as a plain name ("social security number") and each context
writes it its own way: a CSV column header, a ``snake_case`` config key, a
``camelCase`` JSON key, ``key=value`` in a log line, ``**Name:**`` in
markdown, a sentence in chat.
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable
from pathlib import Path

SEED = 9_2026_1202
OUT = Path(__file__).resolve().parent / "heldout2.jsonl"
PER_TYPE = 100
PER_CATEGORY = 60

UP = string.ascii_uppercase
LO = string.ascii_lowercase
NUM = string.digits
ALNUM = UP + LO + NUM
BASE64 = ALNUM + "+/"
HEXD = "0123456789abcdef"

r = random.Random(SEED)


def choose(*items: str) -> str:
    return r.choice(items)


def num(lo: int, hi: int) -> int:
    return r.randint(lo, hi)


def draw(alphabet: str, length: int) -> str:
    return "".join(r.choice(alphabet) for _ in range(length))


def generated(length: int, alphabet: str = ALNUM) -> str:
    """A machine-made key: upper, lower and digits all present."""
    while True:
        s = draw(alphabet, length)
        if set(s) & set(UP) and set(s) & set(LO) and set(s) & set(NUM):
            return s


GIVEN = ["yusuf", "ama", "henrik", "priya", "mateo", "zainab", "lars", "keiko", "diego", "fatima"]
FAMILY = ["adeyemi", "lindqvist", "moreau", "kowalczyk", "nakamura", "obi", "varga", "quispe"]
DOMAINS = ["northwind.test", "contoso.example", "blueyonder.dev", "margie-travel.net"]


# --- values ------------------------------------------------------------------------


def email() -> str:
    g, f = r.choice(GIVEN), r.choice(FAMILY)
    return choose(f"{g}_{f}", f"{g}.{f[:3]}{num(10, 99)}", f"{f}{g[0]}") + "@" + r.choice(DOMAINS)


def ssn_groups() -> tuple[int, int, int]:
    while True:
        area = num(1, 899)
        if area != 666:
            return area, num(1, 99), num(1, 9999)


def ssn_dashed() -> str:
    a, g, s = ssn_groups()
    return f"{a:03d}-{g:02d}-{s:04d}"


def ssn_nine() -> str:
    a, g, s = ssn_groups()
    return f"{a:03d}{g:02d}{s:04d}"


def luhn_digit(body: str) -> str:
    total = 0
    for i, ch in enumerate(reversed(body)):
        d = int(ch) * 2 if i % 2 == 0 else int(ch)
        total += d - 9 if d > 9 else d
    return str(-total % 10)


def card() -> str:
    prefix = choose("4", "51", "55", "37", "6011")
    length = 15 if prefix == "37" else 16
    body = prefix + draw(NUM, length - len(prefix) - 1)
    full = body + luhn_digit(body)
    if length == 15:
        return choose(full, f"{full[:4]} {full[4:10]} {full[10:]}")
    return choose(full, " ".join(full[i : i + 4] for i in range(0, 16, 4)))


def phone_intl() -> str:
    return choose(
        f"+1-{num(201, 989)}-{num(200, 999)}-{num(0, 9999):04d}",
        f"+49 30 {num(1000000, 9999999)}",
        f"+33 6 {num(10, 99)} {num(10, 99)} {num(10, 99)} {num(10, 99)}",
        f"+61 4{num(10, 99)} {num(100, 999)} {num(100, 999)}",
        f"+353 87 {num(100, 999)} {num(1000, 9999)}",
    )


def phone_national() -> str:
    """National format, no country code: the shapes people type."""
    npa, nxx, line = num(201, 989), num(200, 999), num(0, 9999)
    return choose(
        f"({npa}) {nxx}-{line:04d}",
        f"({npa}){nxx}-{line:04d}",
        f"{npa}-{nxx}-{line:04d}",
        f"{npa} {nxx} {line:04d}",
        f"{npa}.{nxx}.{line:04d}",
        f"020 {num(3000, 8999)} {num(1000, 9999)}",
        f"07{num(400, 999)} {num(100000, 999999)}",
        f"0{num(113, 199)} {num(200, 999)} {num(1000, 9999)}",
        f"06 {num(10, 99)} {num(10, 99)} {num(10, 99)} {num(10, 99)}",
        f"0{num(151, 179)} {num(1000000, 99999999)}",
        f"(0{num(2, 8)}) {num(1000, 9999)} {num(1000, 9999)}",
        f"04{num(10, 99)} {num(100, 999)} {num(100, 999)}",
    )


def ipv4() -> str:
    return choose(
        f"10.{num(0, 255)}.{num(0, 255)}.{num(1, 254)}",
        f"192.168.{num(0, 255)}.{num(1, 254)}",
        f"{num(11, 223)}.{num(0, 255)}.{num(0, 255)}.{num(1, 254)}",
    )


def ipv6() -> str:
    h = [format(num(1, 0xFFFF), "x") for _ in range(8)]
    return choose(
        ":".join(h),
        f"2001:db8:{h[0]}::{h[1]}",
        f"fe80::{h[2]}:{h[3]}:{h[4]}:{h[5]}",
        f"2a00:{h[1]}:{h[2]}:{h[3]}::{num(1, 9)}",
    )


def iban() -> str:
    country, length = r.choice([("GB", 18), ("NL", 14), ("ES", 20), ("IT", 23), ("CH", 17)])
    if country in ("GB", "NL"):
        bban = draw(UP, 4) + draw(NUM, length - 4)
    elif country == "IT":
        bban = draw(UP, 1) + draw(NUM, length - 1)
    else:
        bban = draw(NUM, length)
    digits = "".join(str(int(c, 36)) for c in bban + country + "00")
    compact = f"{country}{98 - int(digits) % 97:02d}{bban}"
    return choose(compact, " ".join(compact[i : i + 4] for i in range(0, len(compact), 4)))


def aws_key_id() -> str:
    return choose("AKIA", "AKIA", "ASIA") + draw(UP + "234567", 16)


def aws_secret() -> str:
    return generated(40, BASE64)


def generic_key() -> str:
    return choose(
        draw(HEXD, 32),
        draw(HEXD, 40),
        draw(HEXD, 64),
        draw(HEXD.upper(), 32),
        generated(32),
        generated(48),
        generated(43, BASE64 + "-_"),
        generated(42, BASE64) + "==",
        generated(27, BASE64) + "=",
    )


def github() -> str:
    return choose("ghp_", "ghu_", "ghr_") + generated(36)


def stripe() -> str:
    return choose("sk_live_", "sk_test_") + generated(num(24, 99))


def slack() -> str:
    return (
        f"xoxp-{num(10**10, 10**11)}-{num(10**10, 10**11)}-{num(10**11, 10**12)}-{draw(HEXD, 32)}"
    )


def jwt() -> str:
    import base64

    def part(obj: object) -> str:
        raw = json.dumps(obj, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

    sig = base64.urlsafe_b64encode(r.randbytes(num(32, 64))).rstrip(b"=").decode()
    claims = {
        "iss": r.choice(DOMAINS),
        "uid": num(1, 10**6),
        "iat": num(1_700_000_000, 1_800_000_000),
    }
    return f"{part({'typ': 'JWT', 'alg': 'HS256'})}.{part(claims)}.{sig}"


# --- contexts: (label name or None, value) -> text -----------------------------------


def snake(name: str) -> str:
    return "_".join(name.replace("-", " ").replace("#", " no").split()).lower()


def camel(name: str) -> str:
    words = name.replace("-", " ").replace("#", " no").split()
    return words[0].lower() + "".join(w.title() for w in words[1:])


def title(name: str) -> str:
    return " ".join(w if w.isupper() else w.title() for w in name.split())


def chat(label: str | None, value: str) -> str:
    who, other = r.sample(GIVEN, 2)
    if label is None:
        line = choose(
            f"pasting it here {value}",
            f"try {value} and tell me",
            f"{value}",
            f"it was {value} last time I checked",
        )
    else:
        line = choose(
            f"my {label} is {value}",
            f"{label}: {value}",
            f"here's the {label} {value}",
            f"{title(label)} - {value}",
        )
    return f"<{who}> {line}\n<{other}> got it, thanks\n"


def csv_rows(label: str | None, value: str) -> str:
    column = title(label) if label else choose("value", "field_3", "data")
    other = r.choice(GIVEN).title()
    return choose(
        f"id,name,{column}\n{num(1, 999)},{other},{value}\n",
        f'name;{column};updated\n"{other}";"{value}";2026-0{num(1, 9)}-1{num(0, 9)}\n',
    )


def config(label: str | None, value: str) -> str:
    key = snake(label) if label else choose("value", "extra", "note")
    return choose(
        f"[default]\n{key} = {value}\nregion = eu-north-1\n",
        f'{key.upper()}="{value}"\nLOG_LEVEL=info\n',
        f"app:\n  name: billing\n  {key}: {value}\n",
        json.dumps({"service": "billing", camel(label or "extra"): value}, indent=2) + "\n",
    )


def log(label: str | None, value: str) -> str:
    stamp = f"2026-0{num(1, 9)}-{num(10, 28)}T{num(10, 23)}:{num(10, 59)}:{num(10, 59)}Z"
    level = choose("INFO", "WARN", "DEBUG")
    if label is None:
        body = choose(f'msg="received {value}"', f"payload {value} queued")
    else:
        body = choose(f"{snake(label)}={value}", f'msg="{label} set" value={value}')
    return f"{stamp} {level} svc=billing req={draw(HEXD, 8)} {body}\n"


def markdown(label: str | None, value: str) -> str:
    if label is None:
        return choose(
            f"Steps:\n\n1. copy `{value}`\n2. restart\n", f"> {value}\n\n-- from the wiki\n"
        )
    return choose(
        f"- **{title(label)}:** {value}\n- **Owner:** {r.choice(GIVEN)}\n",
        f"| Key | Value |\n|-----|-------|\n| {title(label)} | `{value}` |\n",
        f"## Setup\n\nSet the {label} to `{value}`.\n",
    )


def json_escaped(label: str | None, value: str) -> str:
    inner = {camel(label) if label else "text": value, "ok": True}
    return json.dumps({"tool": "lookup", "result": json.dumps(inner)})


CONTEXTS: dict[str, Callable[[str | None, str], str]] = {
    "chat": chat,
    "csv": csv_rows,
    "config": config,
    "log": log,
    "markdown": markdown,
    "json_escaped": json_escaped,
}


def shown(context: str, text: str, value: str) -> str:
    """The value as it appears in the text (escaped twice inside JSON-in-JSON)."""
    if context == "json_escaped":
        return json.dumps(json.dumps(value)[1:-1])[1:-1]
    if context == "config" and text.lstrip().startswith("{"):
        return json.dumps(value)[1:-1]
    return value


# type -> (value maker, label names; None is no label)
POSITIVES: dict[str, tuple[Callable[[], str], list[str | None]]] = {
    "email": (email, [None, "email", "contact address"]),
    "ssn": (ssn_dashed, [None, "SSN", "social security number"]),
    "ssn_bare": (
        ssn_nine,
        ["SSN", "ssn", "social security number", "SS number", "tax id (SSN)", "patient SSN"],
    ),
    "card": (card, [None, "card number", "pan"]),
    "phone": (phone_intl, [None, "phone", "mobile"]),
    "phone_national": (
        phone_national,
        [None, None, None, "phone", "cell number", "home phone", "contact number", "tel"],
    ),
    "ipv4": (ipv4, [None, "client ip", "remote addr"]),
    "ipv6": (ipv6, [None, "client ip", "ipv6 address"]),
    "iban": (iban, [None, "IBAN", "bank account"]),
    "aws_access_key": (aws_key_id, [None, "aws access key id"]),
    "aws_secret_key": (aws_secret, [None, None, None, "aws secret access key", "secret key"]),
    "generic_api_key": (
        generic_key,
        [
            "api key",
            "apiKey",
            "access token",
            "client secret",
            "app secret",
            "consumer secret",
            "private token",
            "X-API-Key",
            "auth key",
            "secret",
        ],
    ),
    "github_token": (github, [None, "github token"]),
    "stripe_key": (stripe, [None, "stripe secret"]),
    "slack_token": (slack, [None, "slack token"]),
    "jwt": (jwt, [None, "access token"]),
}


def make_positive(kind: str) -> dict[str, object]:
    maker, labels = POSITIVES[kind]
    while True:
        value, label = maker(), r.choice(labels)
        context = r.choice(sorted(CONTEXTS))
        pieces = [value]
        if kind == "aws_secret_key" and label is None and r.random() < 0.5:
            # credentials.csv and friends: the key id, then the secret, no label.
            key_id = aws_key_id()
            pieces = [key_id, value]
            value_text = f"{key_id}{choose(',', ' ', ':', ' | ')}{value}"
        else:
            key_id, value_text = "", value
        text = CONTEXTS[context](label, value_text)
        spans = []
        for piece, name in zip(pieces, ["aws_access_key", kind] if key_id else [kind], strict=True):
            needle = shown(context, text, piece)
            start = text.find(needle)
            if start < 0 or text.find(needle, start + 1) >= 0:
                break
            spans.append([start, start + len(needle), name])
        else:
            return {
                "kind": "positive",
                "label": kind,
                "context": context,
                "text": text,
                "spans": spans,
            }


# --- hard negatives -----------------------------------------------------------------


def version_strings() -> str:
    a, b, c, d = num(1, 15), num(0, 9), num(0, 30), num(0, 250)
    return choose(
        f"Chrome/{num(100, 130)}.0.{num(4000, 6999)}.{num(10, 250)}",
        f"upgraded from {a}.{b}.{c}.{d} to {a}.{b}.{c}.{d + 1}",
        f"## {a}.{b}.{c}.{d} - 2026-0{num(1, 9)}-1{num(0, 9)}",
        f"nuget install Contoso.Sdk -Version {a}.{b}.{c}.{d}",
        f"Windows {num(6, 10)}.{b}.{c}.{d}",
        f"firmware rev {a}.{b}.{c}.{d}",
        f"bundle_version: {a}.{b}.{c}.{d}",
        f"installer {a}.{b}.{c}.{d}-x64.msi",
    )


def build_ids() -> str:
    return choose(
        f"build #{num(2024, 2026)}{num(1, 12):02d}{num(1, 28):02d}.{num(1, 9)}",
        f"build-id {draw(HEXD, 12)}",
        f"BuildNumber 1.0.{num(1000, 9999)}.{num(10000, 65000)}",
        f"pipeline run {num(10**9, 10**10 - 1)}",
        f"image tag {draw(HEXD, 7)}-{num(100, 999)}",
        f"artifact {r.choice(GIVEN)}-{num(1, 9)}.{num(0, 9)}.{num(0, 9)}+build.{num(100, 999)}",
    )


def timestamps() -> str:
    return choose(
        f"2026-0{num(1, 9)}-{num(10, 28)}T{num(10, 23)}:{num(10, 59)}"
        f":{num(10, 59)}.{num(100, 999)}Z",
        f"[{num(10, 28)}/Mar/2026:{num(10, 23)}:{num(10, 59)}:{num(10, 59)} +0000]",
        f"ts={num(1_700_000_000, 1_800_000_000)}",
        f"epoch_ms {num(1_700_000_000_000, 1_800_000_000_000)}",
        f"{num(2024, 2026)}{num(1, 12):02d}{num(1, 28):02d}"
        f"{num(0, 23):02d}{num(0, 59):02d}{num(0, 59):02d}",
        f"elapsed {num(0, 99):02d}:{num(0, 59):02d}:{num(0, 59):02d}:{num(0, 99):02d}",
    )


def url_hashes() -> str:
    return choose(
        f"https://cdn.{r.choice(DOMAINS)}/static/main.{draw(HEXD, 20)}.js",
        f"https://git.{r.choice(DOMAINS)}/billing/blob/{draw(HEXD, 40)}/README.md",
        f"https://dl.{r.choice(DOMAINS)}/pkg.tgz?sha256={draw(HEXD, 64)}",
        f"registry.{r.choice(DOMAINS)}/app@sha256:{draw(HEXD, 64)}",
        f"https://{r.choice(DOMAINS)}/cache/{draw(HEXD, 32)}/thumb.png",
        f"https://{r.choice(DOMAINS)}/avatar/{draw(HEXD, 32)}?s=80",
    )


def colon_sequences() -> str:
    return choose(
        ":".join(draw(HEXD, 2) for _ in range(num(8, 16))),
        f"ports {num(1024, 9999)}:{num(1, 999)}:{num(1024, 9999)}:{num(1, 999)}",
        "ratio " + ":".join(str(num(1, 99)) for _ in range(num(4, 6))),
        "key: " + ":".join(draw(HEXD.upper(), 2) for _ in range(20)),
        f"tc {num(0, 23):02d}:{num(0, 59):02d}:{num(0, 59):02d}:{num(0, 29):02d}",
        "oid:" + ":".join(str(num(1, 40)) for _ in range(num(5, 8))),
        f"a:{draw(LO, 3)}:{draw(LO, 4)}:{draw(LO, 3)}",
        f"urn:isbn:{num(10**12, 10**13 - 1)}",
        f"span {draw(HEXD, 16)}:{draw(HEXD, 16)}:0:1",
    )


def order_numbers() -> str:
    return choose(
        f"order #{num(100000000, 999999999)}",
        f"Order ID: {num(100, 999)}-{num(1000000, 9999999)}-{num(1000000, 9999999)}",
        f"PO-{num(2024, 2026)}-{num(1000, 99999):06d}",
        f"invoice {num(10**9, 10**10 - 1)}",
        f"ref {num(100, 999)}-{num(10, 99)}-{num(1000, 9999)}X",
        f"confirmation {num(100000000, 999999999)}",
    )


def zip_plus4() -> str:
    return choose(
        f"Springfield, IL {num(60000, 62999)}-{num(1000, 9999)}",
        f"zip: {num(10000, 99999)}-{num(1000, 9999)}",
        f"PO Box {num(1, 999)}, Austin TX {num(73301, 78799)}-{num(1000, 9999)}",
    )


def counters() -> str:
    return choose(
        f"{num(1, 9)} {num(100, 999)} {num(100, 999)} {num(100, 999)} rows",
        f"{num(1, 9)},{num(100, 999)},{num(100, 999)},{num(100, 999)} requests",
        f"bytes_sent={num(10**9, 10**10 - 1)}",
        f"seq {num(100, 999)}-{num(100, 999)}-{num(1000, 9999)}-{num(10, 99)}",
        f"count {num(1, 9)}.{num(300, 999)}.{num(300, 999)}",
        f"counter 0{num(100, 999)} {num(100, 999)} {num(1000, 9999)} frames",
        f"job {num(200, 999)}{num(200, 999)}{num(1000, 9999)} finished",
    )


def placeholders() -> str:
    return choose(
        "api_key = <your-api-key>",
        "AWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY}",
        "client_secret: REPLACE_ME_WITH_THE_REAL_SECRET",
        "SSN: ***-**-****",
        "card: XXXX XXXX XXXX 4242",
        "phone: (555) 555-XXXX",
        "access_token: {{ vault.token }}",
    )


NEGATIVES: dict[str, Callable[[], str]] = {
    "version": version_strings,
    "build_id": build_ids,
    "timestamp": timestamps,
    "url_hash": url_hashes,
    "colon_sequence": colon_sequences,
    "order_number": order_numbers,
    "zip_plus4": zip_plus4,
    "counter": counters,
    "placeholder": placeholders,
}


def make_negative(category: str) -> dict[str, object]:
    context = r.choice(sorted(CONTEXTS))
    text = CONTEXTS[context](None, NEGATIVES[category]())
    return {"kind": "negative", "label": category, "context": context, "text": text, "spans": []}


def main() -> None:
    records = [make_positive(kind) for kind in POSITIVES for _ in range(PER_TYPE)]
    records += [make_negative(cat) for cat in NEGATIVES for _ in range(PER_CATEGORY)]
    with OUT.open("w", encoding="utf-8") as out:
        for i, rec in enumerate(records, 1):
            out.write(json.dumps({"id": f"h2-{i:04d}", **rec}, ensure_ascii=False) + "\n")
    print(f"wrote {len(records)} records to {OUT}")


if __name__ == "__main__":
    main()

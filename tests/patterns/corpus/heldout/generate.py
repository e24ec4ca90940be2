"""Writes the HELD-OUT detection split (``heldout.jsonl``) from its own seed.

This split exists to measure the packs on text they were not tuned on. It has
its own vocabulary, templates and seed, shares no code with ``../generate.py``
(the tuning split), and was written and scored once *before* the patterns of
issue 30 were tuned. Nobody may tune a pattern, a check or a keyword list
against it afterwards: look at ``records.jsonl`` (the tuning split) for what
to fix, and at this one only for the figure. Before/after figures are in
docs/patterns.md. Changing this file resets that promise: say so in review.

Record format as in ``../generate.py``; every value is a random fake.
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable
from pathlib import Path

SEED = 30_0417
OUT = Path(__file__).resolve().parent / "heldout.jsonl"
PER_TYPE = 120
PER_CATEGORY = 60

AZ = string.ascii_letters
DIG = string.digits
B62 = AZ + DIG
B64 = B62 + "+/"
HEXL = "0123456789abcdef"

rng = random.Random(SEED)


def one(*xs: str) -> str:
    return rng.choice(xs)


def n(lo: int, hi: int) -> int:
    return rng.randint(lo, hi)


def chars(alpha: str, k: int) -> str:
    return "".join(rng.choice(alpha) for _ in range(k))


def keyish(k: int, alpha: str = B62) -> str:
    """Random text that has lowercase, uppercase and digits."""
    while True:
        s = chars(alpha, k)
        if (
            any(c.islower() for c in s)
            and any(c.isupper() for c in s)
            and any(c.isdigit() for c in s)
        ):
            return s


PEOPLE = [
    "noor",
    "tomasz",
    "akira",
    "beatriz",
    "chidi",
    "svetlana",
    "omar",
    "lucia",
    "kwame",
    "ingrid",
    "ravi",
    "mei",
]
SURN = [
    "okafor",
    "nowak",
    "tanaka",
    "silva",
    "eze",
    "petrova",
    "haddad",
    "rossi",
    "mensah",
    "berg",
    "iyer",
    "chen",
]
ORGS = [
    "fabrikam.com",
    "tailspin.example",
    "wingtip.org",
    "adventure-works.net",
    "litware.io",
    "proseware.co",
]


# --- positive values -------------------------------------------------------------


def v_email() -> str:
    p, s = rng.choice(PEOPLE), rng.choice(SURN)
    return one(f"{p}.{s}", f"{p[0]}.{s}{n(1, 9)}", f"{s}-{p}", f"{p}{s}") + "@" + rng.choice(ORGS)


def _ssn() -> tuple[str, str, str]:
    area = n(1, 899)
    while area == 666:
        area = n(1, 899)
    return f"{area:03d}", f"{n(1, 99):02d}", f"{n(1, 9999):04d}"


def v_ssn() -> str:
    a, g, s = _ssn()
    return one(f"{a}-{g}-{s}", f"{a}-{g}-{s}", f"{a} {g} {s}")


def v_ssn_bare() -> str:
    return "".join(_ssn())


def _luhn(prefix: str, length: int) -> str:
    body = prefix + chars(DIG, length - len(prefix) - 1)
    total = 0
    for i, ch in enumerate(reversed(body)):
        d = int(ch) * (2 if i % 2 == 0 else 1)
        total += d - 9 if d > 9 else d
    return body + str((10 - total % 10) % 10)


def v_card() -> str:
    num = _luhn(one("4", "53", "2223", "6011", "35"), 16)
    sep = one("", " ", "-")
    return sep.join(num[i : i + 4] for i in range(0, 16, 4))


def v_phone() -> str:
    return one(
        f"+1 {n(201, 989)} {n(200, 999)} {n(0, 9999):04d}",
        f"+44 7{n(100, 999)} {n(100000, 999999)}",
        f"+34 {n(600, 699)} {n(100, 999)} {n(100, 999)}",
        f"+81 3-{n(1000, 9999)}-{n(1000, 9999)}",
        f"+91 {n(70000, 99999)} {n(10000, 99999)}",
    )


def v_phone_national() -> str:
    a, e, line = n(201, 989), n(200, 999), n(0, 9999)
    return one(
        f"({a}) {e}-{line:04d}",
        f"{a}-{e}-{line:04d}",
        f"{a}.{e}.{line:04d}",
        f"020 {n(7000, 8999)} {n(1000, 9999)}",
        f"0161 {n(100, 999)} {n(1000, 9999)}",
        f"01632 {n(100000, 999999)}",
        f"07{n(100, 999)} {n(100, 999)} {n(100, 999)}",
        f"0{n(1, 9)} {n(10, 99)} {n(10, 99)} {n(10, 99)} {n(10, 99)}",
        f"030 {n(1000, 9999)} {n(1000, 9999)}",
        f"0{n(2, 4)}{n(1, 9)} {n(100, 999)} {n(100, 999)}",
    )


def v_ipv4() -> str:
    return (
        f"{one('10', '172', '192', '100', '81', '185', '45')}.{n(0, 255)}.{n(0, 255)}.{n(1, 254)}"
    )


def v_ipv6() -> str:
    g = [f"{n(0, 0xFFFF):x}" for _ in range(8)]
    return one(
        ":".join(g),
        f"2001:db8::{g[6]}:{g[7]}",
        f"fd00:{g[1]}::{g[7]}",
        f"2620:{g[1]}:{g[2]}::{g[6]}",
    )


def v_iban() -> str:
    country, length = rng.choice([("DE", 18), ("FR", 23), ("BE", 12), ("AT", 16), ("PL", 24)])
    bban = chars(DIG, length)
    numeric = "".join(str(int(c, 36)) for c in bban + country + "00")
    compact = f"{country}{98 - int(numeric) % 97:02d}{bban}"
    return (
        compact
        if rng.random() < 0.5
        else " ".join(compact[i : i + 4] for i in range(0, len(compact), 4))
    )


def v_aws_id() -> str:
    return one("AKIA", "ASIA") + chars(string.ascii_uppercase + "234567", 16)


def v_aws_secret() -> str:
    return keyish(40, B64)


def v_github() -> str:
    return one("ghp_", "gho_", "ghs_") + keyish(36)


def v_slack() -> str:
    return f"xoxb-{n(10**10, 10**11)}-{n(10**10, 10**11)}-{keyish(24)}"


def v_stripe() -> str:
    return one("sk_live_", "rk_live_") + keyish(24)


def v_google() -> str:
    return "AIza" + keyish(35, B62 + "-_")


def v_generic() -> str:
    return one(
        chars(HEXL, 32),
        chars(HEXL, 40),
        chars(HEXL, 64),
        keyish(32),
        keyish(44, B64).rstrip("+/") + "=",
    )


def v_vendor() -> str:
    return one(
        "glpat-" + keyish(20), "npm_" + keyish(36), "hf_" + keyish(34), "sk-proj-" + keyish(48)
    )


def v_jwt() -> str:
    import base64

    def enc(obj: object) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()

    sig = (
        base64.urlsafe_b64encode(bytes(rng.getrandbits(8) for _ in range(32))).rstrip(b"=").decode()
    )
    header = enc({"alg": "RS256", "kid": chars(HEXL, 8)})
    claims = enc({"sub": rng.choice(PEOPLE), "exp": n(1_800_000_000, 1_900_000_000)})
    return f"{header}.{claims}.{sig}"


# --- contexts: each returns the text around a value (the value appears once) -----


def c_chat(label: str, value: str) -> str:
    who = rng.choice(PEOPLE)
    line = (
        f"{label} {value}"
        if label
        else one(f"ok so it's {value}", f"use {value} for now", f"{value} <- that one")
    )
    return f"{who} [{n(1, 12)}:{n(10, 59)} PM]: {line}\n{rng.choice(PEOPLE)}: thx\n"


def c_csv(label: str, value: str) -> str:
    head = label.strip(" :=").replace(" ", "_") or "value"
    return f"user,{head},created\n{rng.choice(PEOPLE)},{value},2025-1{n(0, 2)}-0{n(1, 9)}\n"


def c_config(label: str, value: str) -> str:
    key = label.strip(" :=").replace(" ", "_") or "value"
    return one(
        f'[service]\n{key} = "{value}"\nretries = 3\n',
        f"service:\n  {key}: '{value}'\n  retries: 3\n",
    )


def c_log(label: str, value: str) -> str:
    stamp = f"Jan {n(10, 28)} 0{n(1, 9)}:{n(10, 59)}:{n(10, 59)}"
    return f"{stamp} host{n(1, 9)} worker[{n(100, 9999)}]: {label}{value} accepted\n"


def c_markdown(label: str, value: str) -> str:
    return one(
        f"### Notes\n\n* {label}`{value}`\n",
        f"| field | data |\n| --- | --- |\n| {label.strip(' :=') or 'x'} | {value} |\n",
    )


def c_json_escaped(label: str, value: str) -> str:
    inner = json.dumps({"note": f"{label}{value}"})
    return json.dumps({"payload": inner})


def c_ticket(label: str, value: str) -> str:
    who = f"Ticket #{n(1000, 9999)} ({rng.choice(PEOPLE).title()})"
    return f'{who}: customer wrote "{label}{value}" - please check.\n'


CONTEXTS: dict[str, Callable[[str, str], str]] = {
    "chat": c_chat,
    "csv": c_csv,
    "config": c_config,
    "log": c_log,
    "markdown": c_markdown,
    "json_escaped": c_json_escaped,
    "ticket": c_ticket,
}


def rendered(context: str, value: str) -> str:
    return json.dumps(json.dumps(value)[1:-1])[1:-1] if context == "json_escaped" else value


# type -> (value maker, labels; "" means no label at all)
TYPES: dict[str, tuple[Callable[[], str], list[str]]] = {
    "email": (v_email, ["", "mail: ", "reply-to "]),
    "ssn": (v_ssn, ["", "SSN ", "ss#: "]),
    "ssn_bare": (
        v_ssn_bare,
        ["SSN#", "ssn: ", "Social Security: ", "SSN ", "social sec no. ", "ss# "],
    ),
    "card": (v_card, ["", "card: ", "visa "]),
    "phone": (v_phone, ["", "ph. ", "whatsapp "]),
    "phone_national": (v_phone_national, ["", "", "ring me on ", "ph: ", "contact ", "office "]),
    "ipv4": (v_ipv4, ["", "from ", "host="]),
    "ipv6": (v_ipv6, ["", "src=", "peer "]),
    "iban": (v_iban, ["", "IBAN ", "acct: "]),
    "aws_access_key": (v_aws_id, ["", "key id ", "AccessKeyId="]),
    "aws_secret_key": (v_aws_secret, ["@ID", "@ID", "aws secret ", "AWS_SECRET_ACCESS_KEY=", ""]),
    "github_token": (v_github, ["", "GH_TOKEN=", "token "]),
    "slack_token": (v_slack, ["", "bot token: "]),
    "stripe_key": (v_stripe, ["", "stripe: "]),
    "google_api_key": (v_google, ["", "maps key "]),
    "generic_api_key": (
        v_generic,
        [
            "api_key=",
            "x-api-key: ",
            "secret_key: ",
            "Ocp-Apim-Subscription-Key: ",
            "private_key_id: ",
            "webhook secret ",
            "signing_secret=",
            "license key: ",
        ],
    ),
    "vendor_key": (v_vendor, ["", "key "]),
    "jwt": (v_jwt, ["", "id_token="]),
}


def positive(kind: str) -> dict[str, object]:
    make, labels = TYPES[kind]
    while True:
        value, label = make(), rng.choice(labels)
        key_id = ""
        if label == "@ID":  # an AWS secret written next to its key id, no label of its own
            key_id, label = v_aws_id(), ""
        context = rng.choice(sorted(CONTEXTS))
        sep = one(" / ", ",", " ", " : ", "\n")
        text = CONTEXTS[context](label, f"{key_id}{sep}{value}" if key_id else value)
        spans = []
        for shown, name in ((rendered(context, value), kind), (key_id, "aws_access_key")):
            start = text.find(shown) if shown else -2
            if start == -2:
                continue
            if start < 0 or text.find(shown, start + 1) >= 0:
                break
            spans.append([start, start + len(shown), name])
        else:
            return {
                "kind": "positive",
                "label": kind,
                "context": context,
                "text": text,
                "spans": spans,
            }


# --- hard negatives ---------------------------------------------------------------


def g_version() -> str:
    a, b, c, d = n(1, 12), n(0, 20), n(0, 99), n(0, 9999)
    return one(
        f"upgraded agent to {a}.{b}.{c}.{d}",
        f"Build {a}.{b}.{c}.{d}",
        f'AssemblyVersion("{a}.{b}.{c}.{d}")',
        f"pkg-{a}.{b}.{c}.{d}.tar.gz",
        f"[{a}.{b}.{c}.{d}] fixed the crash",
        f"driver {a}.{b}.{c}.{d} (latest)",
        f"ProductVersion: {a}.{b}.{c}.{d}",
        f"v{a}.{b}.{c}.{d}",
        f"runtime=10.0.{n(0, 255)}.{n(1, 254)}",
        f"Release {a}.{b}.{c}.{d}.{n(1, 9)}",
    )


def g_mac() -> str:
    b = [chars(HEXL, 2) for _ in range(6)]
    return one(":".join(b), ":".join(b).upper(), "-".join(b), f"ether {':'.join(b)}")


def g_time() -> str:
    h, m, s = n(0, 23), n(0, 59), n(0, 59)
    return one(
        f"{h:02d}:{m:02d}:{s:02d}",
        f"at {h:02d}:{m:02d}:{s:02d}.{n(0, 999):03d}",
        f"uptime {n(1, 99)}:{h:02d}:{m:02d}:{s:02d}",
        f"ratio {n(1, 9)}:{n(1, 9)}:{n(1, 9)}",
    )


def g_colon_hash() -> str:
    return one(
        "MD5:" + ":".join(chars(HEXL, 2) for _ in range(16)),
        "SHA1 Fingerprint=" + ":".join(chars("0123456789ABCDEF", 2) for _ in range(20)),
        ":".join(chars(HEXL, 4) for _ in range(8)) + " (fingerprint)",
        "key fingerprint " + ":".join(chars(HEXL, 4) for _ in range(10)),
    )


def g_sha() -> str:
    return one(
        f"commit {chars(HEXL, 40)}",
        f"/commit/{chars(HEXL, 40)}",
        f"sha256 {chars(HEXL, 64)}",
        f"digest: {chars(HEXL, 32)}",
        f"request_id={chars(HEXL, 32)}",
    )


def g_uuid() -> str:
    h = chars(HEXL, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


def g_numbers() -> str:
    return one(
        f"order {n(100000000, 999999999)}",
        f"routing 0{n(10000000, 99999999)}",
        f"invoice no. {n(100000000, 999999999)}",
        f"{n(100000000, 999999999)} bytes",
        f"ISBN 978-{n(0, 9)}-{n(100, 999)}-{n(10000, 99999)}-{n(0, 9)}",
        f"zip {n(10000, 99999)}-{n(1000, 9999)}",
        f"SSN 000-{n(10, 99)}-{n(1000, 9999)}",
        f"9{n(10, 99)}-{n(10, 99)}-{n(1000, 9999)} (ITIN)",
        f"serial {n(1000, 9999)} {n(1000, 9999)} {n(1000, 9999)}",
        f"{n(2000, 2030)} {n(1, 12):02d} {n(1, 28):02d}",
    )


def g_code() -> str:
    return one(
        "std::map<int, int>",
        "Self::new()",
        "::std::ptr",
        "ns::a::b",
        "f(0x1f, 0x20)",
        "a = b ?: c",
        "docker run -p 8080:80 -p 9090:90",
    )


def g_keyish_words() -> str:
    return one(
        "api_key=PLACEHOLDER_VALUE_HERE",
        "secret_key: your_secret_key_here",
        "token: ${{ secrets.DEPLOY }}",
        "x-api-key: <redacted>",
        "aws secret: see 1password",
        "license key: ask procurement",
    )


NEGATIVES: dict[str, Callable[[], str]] = {
    "version": g_version,
    "mac_address": g_mac,
    "time": g_time,
    "colon_hash": g_colon_hash,
    "hex_digest": g_sha,
    "uuid": g_uuid,
    "numbers": g_numbers,
    "code": g_code,
    "key_words": g_keyish_words,
}


def negative(category: str) -> dict[str, object]:
    context = rng.choice(sorted(CONTEXTS))
    text = CONTEXTS[context]("", NEGATIVES[category]())
    return {"kind": "negative", "label": category, "context": context, "text": text, "spans": []}


def main() -> None:
    records = [positive(kind) for kind in TYPES for _ in range(PER_TYPE)]
    records += [negative(cat) for cat in NEGATIVES for _ in range(PER_CATEGORY)]
    with OUT.open("w", encoding="utf-8") as out:
        for i, rec in enumerate(records, 1):
            out.write(json.dumps({"id": f"ho-{i:04d}", **rec}, ensure_ascii=False) + "\n")
    print(f"wrote {len(records)} records to {OUT}")


if __name__ == "__main__":
    main()

"""The built-in table as RE2 sees it: compiles, shape, combining, big inputs.

How google-re2 exposes sets and options (read from re2/__init__.py of the
installed google-re2 1.1; see also candidate_checks' module docstring):

* ``o = re2.Options(); o.max_mem = 64 << 20`` then ``re2.compile(p, o)``.
* ``s = re2.Set.SearchSet(o); i = s.Add(p)`` for each pattern, ``s.Compile()``,
  then ``s.Match(text)`` is a list of the indexes that match, or ``None``.
  The google-re2-stubs type ``Match`` as ``bool | None``; it is really
  ``list[int] | None``, hence the ``cast`` below.
* Case-insensitive built-ins carry a scoped ``(?i:...)`` in ``source``: that
  is the only per-pattern way inside one Set or one alternation.
"""

from __future__ import annotations

import ast
import itertools
import random
import sys
from dataclasses import FrozenInstanceError
from pathlib import Path
from typing import cast

import pytest
import re2

from policy_engine.compiler.candidate_checks import CANDIDATE_CHECKS
from policy_engine.compiler.matchers import PatternSpec, TextMatcher
from policy_engine.language import builtin_patterns
from policy_engine.language.builtin_patterns import BUILTIN_PATTERNS, BuiltinPattern

REQUIRED = {
    "EMAIL",
    "SSN",
    "CREDIT_CARD",
    "PHONE",
    "IPV4",
    "IPV6",
    "IBAN",
    "AWS_ACCESS_KEY",
    "AWS_SECRET_KEY",
    "GITHUB_TOKEN",
    "SLACK_TOKEN",
    "STRIPE_KEY",
    "PRIVATE_KEY",
    "JWT",
    "API_KEY",
    "URL",
    "GOOGLE_API_KEY",
    "VENDOR_KEY",
    "BEARER_TOKEN",
    "CONNECTION_STRING",
}

# One finding per pattern, each on its own line in the texts below.
SAMPLES: dict[str, str] = {
    "EMAIL": "alice@example.com",
    "SSN": "123-45-6789",
    "CREDIT_CARD": "4111 1111 1111 1111",
    "PHONE": "+1 415 555 0132",
    "IPV4": "192.0.2.44",
    "IPV6": "2001:db8::42",
    "IBAN": "GB82 WEST 1234 5698 7654 32",
    "AWS_ACCESS_KEY": "AKIA" + "EXAMPLE0FAKE0KEY",
    "AWS_SECRET_KEY": "aws_secret_access_key=" + "Zx9fakeEXAMPLEkey/0123456789+abcdefGHIJK",
    "GITHUB_TOKEN": "gh" + "p_" + "EXAMPLE" * 5 + "x",
    "SLACK_TOKEN": "xo" + "xb-1234567890-1234567890123-" + "EXAMPLEexampleEXAMPLEexa",
    "STRIPE_KEY": "sk_" + "test_" + "0000EXAMPLE0000example0000",
    "PRIVATE_KEY": (
        "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIFAKEfakeFAKEfake0000==\n"
        "-----END EC PRIVATE KEY-----"
    ),
    "JWT": "eyJhbGciOiJub25lIn0.eyJzdWIiOiJmYWtlIn0.c2lnbmF0dXJlZmFrZQ",
    "API_KEY": "api_key=" + "Xk29fLq8Rz0pWm4TnB7v",
    "URL": "https://example.com/path?q=1",
    "GOOGLE_API_KEY": "AI" + "za" + ("FAKE0example0" * 3)[:35],
    "VENDOR_KEY": "gl" + "pat-" + ("FAKE0example0" * 2)[:20],
    "BEARER_TOKEN": "Authorization: Bearer " + "FAKE0example0FAKE0example0opaque",
    "CONNECTION_STRING": "postgres://app:" + "s3cr3t-Fake_Pa55" + "@db.example.com/app",
}

# Where the value a policy replaces is less than the sample: the label stays.
VALUES: dict[str, str] = {
    "AWS_SECRET_KEY": "Zx9fakeEXAMPLEkey/0123456789+abcdefGHIJK",
    "API_KEY": "Xk29fLq8Rz0pWm4TnB7v",
    "BEARER_TOKEN": "FAKE0example0FAKE0example0opaque",
    "CONNECTION_STRING": "s3cr3t-Fake_Pa55",
}


def value_of(name: str) -> str:
    return VALUES.get(name, SAMPLES[name])


def accepted(pattern: BuiltinPattern, text: str) -> list[str]:
    """The values a policy sees (value group or whole match, check passed)."""
    check = CANDIDATE_CHECKS[pattern.check] if pattern.check else None
    matcher = TextMatcher([PatternSpec(pattern.name, pattern.source, check)])
    return [text[hit.start : hit.end] for hit in matcher.hits(text)]


# --- the table itself -------------------------------------------------------


def test_required_names_exactly() -> None:
    assert set(BUILTIN_PATTERNS) == REQUIRED
    for name, pattern in BUILTIN_PATTERNS.items():
        assert pattern.name == name
        assert pattern.description


def test_table_and_entries_are_immutable() -> None:
    pattern = BUILTIN_PATTERNS["EMAIL"]
    with pytest.raises(FrozenInstanceError):
        pattern.regex = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        BUILTIN_PATTERNS["NEW"] = pattern  # type: ignore[index]


def test_checks_named_by_patterns_exist_and_are_all_used() -> None:
    used = {p.check for p in BUILTIN_PATTERNS.values() if p.check is not None}
    assert used == set(CANDIDATE_CHECKS)
    assert BUILTIN_PATTERNS["CREDIT_CARD"].check == "luhn"
    assert BUILTIN_PATTERNS["IBAN"].check == "iban"
    assert BUILTIN_PATTERNS["API_KEY"].check == "entropy"


def test_builtin_patterns_imports_only_the_stdlib() -> None:
    """The checker imports this module; it must not drag in re2 or the compiler."""
    tree = ast.parse(Path(builtin_patterns.__file__).read_text(encoding="utf-8"))
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "no relative imports"
            imported.add((node.module or "").split(".")[0])
    assert imported
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}


@pytest.mark.parametrize("name", sorted(BUILTIN_PATTERNS))
def test_compiles_under_re2_with_at_most_the_value_group(name: str) -> None:
    compiled = re2.compile(BUILTIN_PATTERNS[name].source)
    assert compiled.groups <= 1
    if compiled.groups:
        assert compiled.groupindex == {"value": 1}


@pytest.mark.parametrize("name", sorted(BUILTIN_PATTERNS))
def test_never_matches_the_empty_string(name: str) -> None:
    source = BUILTIN_PATTERNS[name].source
    assert re2.search(source, "") is None
    for text in ("", " ", "\n", "..", "::", "@", "=", "-----"):
        for m in re2.finditer(source, text):
            assert m.end() > m.start()


@pytest.mark.parametrize("name", sorted(BUILTIN_PATTERNS))
def test_sample_is_found(name: str) -> None:
    assert accepted(BUILTIN_PATTERNS[name], f"before\n{SAMPLES[name]}\nafter") == [value_of(name)]


@pytest.mark.parametrize("name", sorted(BUILTIN_PATTERNS))
def test_case_flag_lives_in_source_only(name: str) -> None:
    pattern = BUILTIN_PATTERNS[name]
    # Scoped flags for keywords ("(?i:ssn)") are fine; a global one is not.
    assert not pattern.regex.startswith("(?i)")
    if pattern.case_insensitive and name == "AWS_SECRET_KEY":
        # Its check wants a mixed-case value (a real secret always is) and a
        # bare value counts without a label: shout the label, keep the value.
        assert pattern.source == f"(?i:{pattern.regex})"
        value = value_of(name)
        shouted = SAMPLES[name].replace(value, "\0").upper().replace("\0", value)
        assert shouted != SAMPLES[name]
        assert accepted(pattern, f"x {shouted} y") == [value]
    elif pattern.case_insensitive:
        assert pattern.source == f"(?i:{pattern.regex})"
        shouted = SAMPLES[name].upper()
        assert accepted(pattern, f"x {shouted} y") == [value_of(name).upper()]
        # the raw regex alone is case-sensitive, so the flag is what matters
        assert re2.search(pattern.regex, shouted) is None
    else:
        assert pattern.source == pattern.regex


def test_case_insensitive_set_is_deliberate() -> None:
    flagged = {n for n, p in BUILTIN_PATTERNS.items() if p.case_insensitive}
    assert flagged == {"API_KEY", "AWS_SECRET_KEY", "URL"}


# --- combining ----------------------------------------------------------------


def _options(max_mem: int) -> re2.Options:
    options = re2.Options()
    options.max_mem = max_mem
    options.log_errors = False
    return options


def _set_of_all(options: re2.Options | None = None) -> tuple[re2.Set, list[str]]:
    names = sorted(BUILTIN_PATTERNS)
    pattern_set = re2.Set.SearchSet(options)
    for i, name in enumerate(names):
        assert pattern_set.Add(BUILTIN_PATTERNS[name].source) == i
    pattern_set.Compile()
    return pattern_set, names


def set_hits(pattern_set: re2.Set, names: list[str], text: str) -> set[str]:
    hits = cast("list[int] | None", pattern_set.Match(text))
    return {names[i] for i in hits or []}


@pytest.mark.parametrize("max_mem", [None, 64 << 20])
def test_all_patterns_fit_one_set(max_mem: int | None) -> None:
    pattern_set, names = _set_of_all(None if max_mem is None else _options(max_mem))
    everything = "\n".join(SAMPLES.values())
    # A Set says which regexes match (before candidate checks), not where.
    assert set_hits(pattern_set, names, everything) == REQUIRED
    assert set_hits(pattern_set, names, "mail alice@example.com today") == {"EMAIL"}
    assert set_hits(pattern_set, names, "nothing to see") == set()
    assert pattern_set.Match("") is None


def test_set_case_flags_are_per_pattern() -> None:
    pattern_set, names = _set_of_all()
    assert set_hits(pattern_set, names, "HTTPS://EXAMPLE.COM") == {"URL"}
    # PRIVATE_KEY is case-sensitive even though URL in the same Set is not
    assert set_hits(pattern_set, names, "-----begin ec private key-----") == set()


def test_all_patterns_fit_one_alternation_with_raised_max_mem() -> None:
    alternation = "|".join(f"(?:{BUILTIN_PATTERNS[n].source})" for n in sorted(BUILTIN_PATTERNS))
    combined = re2.compile(alternation, _options(64 << 20))
    assert combined.options.max_mem == 64 << 20
    # RE2 accepts the repeated group name; the compiler never joins value
    # patterns, so which group the name maps to does not matter.
    assert set(combined.groupindex) <= {"value"}
    for name, sample in SAMPLES.items():
        match = combined.search(f"<< {sample} >>")
        assert match is not None and value_of(name) in match.group(), name


def test_too_small_max_mem_fails_loudly() -> None:
    """max_mem bounds compilation: a tiny budget is an error, not a silent miss."""
    alternation = "|".join(f"(?:{p.source})" for p in BUILTIN_PATTERNS.values())
    with pytest.raises(re2.error):
        re2.compile(alternation, _options(1 << 12))
    with pytest.raises(re2.error):
        _set_of_all(_options(1 << 12))


def test_set_rejects_unsupported_syntax() -> None:
    pattern_set = re2.Set.SearchSet(_options(8 << 20))
    with pytest.raises(re2.error):
        pattern_set.Add("(?=lookahead)")


# --- a megabyte of noise --------------------------------------------------------

# Fragments that start many candidate matches and then break them off, plus
# a run of BEGIN lines that once made PRIVATE_KEY rescan (quadratic time).
_FRAGMENTS = [
    "-----BEGIN RSA PRIVATE KEY-----\nAAAA(",
    "api_key=",
    "Token: ",
    "eyJhbGci.",
    "ghp_",
    "xoxb-123-",
    "https://",
    "::",
    "fe80:",
    "AKIA",
    "+1 ",
    "(415) ",
    "4111 1111 ",
    "DE89 ",
    "aws_secret_access_key=",
    "a@b.",
    "192.168.",
    "123-45-",
]
_NOISE = "abcdefXYZ0123456789    ._-:/@=+\n\"'(){}[]"


def _megabyte() -> tuple[str, list[str]]:
    """~1 MB: a run of unterminated BEGIN lines, then noise with fragments and samples."""
    rng = random.Random(20240611)
    parts: list[str] = []
    size = 0
    while size < 1_000_000:
        if rng.random() < 0.02:
            piece = rng.choice(_FRAGMENTS)
        else:
            piece = "".join(rng.choice(_NOISE) for _ in range(rng.randint(1, 60)))
        parts.append(piece)
        size += len(piece)
    # Each sample three times at random places; quotes fence it off, since no
    # pattern's body runs across a double quote.
    planted = list(SAMPLES.values()) * 3
    for sample in planted:
        parts.insert(rng.randrange(len(parts) + 1), f'\n"\n{sample}\n"\n')
    # 10,000 BEGIN lines: the old PRIVATE_KEY took seconds here, the fixed one ms.
    parts.insert(0, "-----BEGIN RSA PRIVATE KEY-----\nAAAA(" * 10_000)
    return "".join(parts), planted


@pytest.fixture(scope="module")
def megabyte() -> tuple[str, list[str]]:
    return _megabyte()


@pytest.mark.parametrize("name", sorted(BUILTIN_PATTERNS))
def test_megabyte_of_noise_completes_and_finds_planted(
    name: str, megabyte: tuple[str, list[str]]
) -> None:
    text, planted = megabyte
    assert len(text) >= 1_000_000
    pattern = BUILTIN_PATTERNS[name]
    spans = [m.span() for m in re2.compile(pattern.source).finditer(text)]
    assert all(start < end for start, end in spans)
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))
    expected = planted.count(SAMPLES[name])
    assert expected > 0
    assert accepted(pattern, text).count(value_of(name)) == expected


def test_megabyte_through_one_set(megabyte: tuple[str, list[str]]) -> None:
    text, _ = megabyte
    pattern_set, names = _set_of_all(_options(64 << 20))
    assert set_hits(pattern_set, names, text) == REQUIRED


# --- docs/patterns.md stays true ----------------------------------------------

DOCS = Path(__file__).resolve().parents[2] / "docs" / "patterns.md"


def _doc_rows() -> dict[str, list[str]]:
    """Pattern-table rows of docs/patterns.md as cells, keyed by pattern name."""
    rows: dict[str, list[str]] = {}
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.replace("\\|", "\x00").split("|")[1:-1]]
        if len(cells) == 5 and cells[0].strip("`") in BUILTIN_PATTERNS:
            rows[cells[0].strip("`")] = [c.replace("\x00", "|") for c in cells]
    return rows


def test_docs_table_lists_every_pattern_with_its_check() -> None:
    rows = _doc_rows()
    assert set(rows) == REQUIRED
    for name, (_, _, check, _, limitation) in rows.items():
        expected = BUILTIN_PATTERNS[name].check
        assert check == (f"`{expected}`" if expected else "—"), name
        assert limitation, name


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_docs_example_is_found(name: str) -> None:
    example = _doc_rows()[name][3]
    assert example.startswith("`") and example.endswith("`")
    example = example[1:-1]
    found = accepted(BUILTIN_PATTERNS[name], f"text {example} text")
    assert len(found) == 1 and found[0] in example


# RE2 finds a value group by backtracking over the match (BitState) only in a
# program of at most 512 instructions; past that it runs its NFA, about seven
# times dearer per match (callgrind). ASCII-only text is scanned with Latin-1
# programs (`TextMatcher._scan_programs`). The personal-data patterns that
# fit are kept fitting: each hit of theirs is on the redaction hot path.
BITSTATE_MAX = 512
FIT_IN_LATIN1 = ("EMAIL", "SSN", "CREDIT_CARD", "IPV4", "IPV6", "IBAN")


@pytest.mark.parametrize("name", FIT_IN_LATIN1)
def test_hot_value_patterns_stay_small_enough_to_backtrack(name: str) -> None:
    source = f"(?m:{BUILTIN_PATTERNS[name].source})"
    options = re2.Options()
    options.max_mem = 64 << 20
    options.encoding = re2.Options.Encoding.LATIN1  # type: ignore[attr-defined]
    assert re2.compile(source.encode("latin-1"), options).programsize <= BITSTATE_MAX
    if name == "EMAIL":  # no negated class to grow in UTF-8
        assert re2.compile(source).programsize <= BITSTATE_MAX


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("Phones: +1 415 555 0132 - 020 7946 0958", ["+1 415 555 0132", "020 7946 0958"]),
        ("+1 415 555 0132 - 415-555-0133", ["+1 415 555 0132", "415-555-0133"]),
        ("+1 415 555 0132 -- (415) 555-0133", ["+1 415 555 0132", "(415) 555-0133"]),
        ("call +33 1 23 45 67 89 - 01 23 45 67 89", ["+33 1 23 45 67 89", "01 23 45 67 89"]),
        ("415 555 0132 3 times", []),
        ("415-555-0132, 3 times", ["415-555-0132"]),
    ],
)
def test_a_phone_list_is_redacted_number_by_number(text: str, numbers: list[str]) -> None:
    """A separator of more than two characters ends a `+` number: shrinking the
    pattern by leaving that run open once let it eat the next number's first digits
    and leave the rest of that number in the clear."""
    matcher = TextMatcher([PatternSpec("PHONE", BUILTIN_PATTERNS["PHONE"].source, None)])
    assert [text[hit.start : hit.end] for hit in matcher.hits(text)] == numbers
    assert [[text[h.start : h.end] for h in hits] for hits in matcher.hits_many([text])] == [
        numbers
    ]


def test_an_email_local_part_of_a_megabyte_is_one_address_or_none() -> None:
    """The local part has no length bound: a hostile run is still one linear scan, and
    an address at its end is redacted whole, not from some inner dot on."""
    run = "a." * 500_000 + "z"
    matcher = TextMatcher([PatternSpec("EMAIL", BUILTIN_PATTERNS["EMAIL"].source, None)])
    found = matcher.hits_many([f"{run}@example.com", run, "ok"])
    assert [[(h.start, h.end) for h in hits] for hits in found] == [
        [(0, len(run) + len("@example.com"))],
        [],
        [],
    ]

r"""Strings that tell regexes apart, for `policyc diff`.

A pull request that widens `/^https:\/\/example\.com\//` to `/^https:\/\//`
changes decisions only on strings one version accepts and the other refuses.
Fixed samples never contain them, so the generator writes strings from each
regex's own syntax tree (smallest and a few seeded variants), decorates them
with the prefixes and suffixes a dropped anchor or guard lets through, and
keeps one string per combination of verdicts across every regex read at the
same path. Deterministic: a diff in CI must be reproducible.
"""

from __future__ import annotations

import random
import re
import re._parser as sre  # type: ignore[import-not-found,import-untyped,unused-ignore]
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

import re2

from ..language.re2_config import re2_options, regex_with_flags

# What a dropped `^`, `$`, `\b` or host guard lets through on either side.
PREFIXES = ("", "x", " ", "evil.test/")
SUFFIXES = ("", "x", "!", "/", "\n", ".evil.test", "@evil.test/x", "/../x")
VARIANTS = 4
"""Seeded walks per regex besides the smallest one."""
MAX_PER_PATH = 16
"""Strings kept per path: one per combination of verdicts, at most this many."""
MAX_SEARCHES = 50_000
"""Regex searches per path, so a path read by a hundred patterns stays quick."""
_MAX_REPEAT_EXTRA = 3
_MAX_TEXT = 256
_CATEGORY_CHARS = {
    "CATEGORY_DIGIT": "7",
    "CATEGORY_NOT_DIGIT": "a",
    "CATEGORY_WORD": "a",
    "CATEGORY_NOT_WORD": "-",
    "CATEGORY_SPACE": " ",
    "CATEGORY_NOT_SPACE": "a",
}
_OUTSIDE_CANDIDATES = "a0Z -./:_@!~"


def _in_set(items: list[Any], char: str) -> bool:
    for op, value in items:
        name = str(op)
        if name == "LITERAL" and chr(value) == char:
            return True
        if name == "RANGE" and value[0] <= ord(char) <= value[1]:
            return True
        if name == "CATEGORY" and re2.search(_category_regex(str(value)), char):
            return True
    return False


def _category_regex(name: str) -> str:
    return {
        "CATEGORY_DIGIT": r"\d",
        "CATEGORY_NOT_DIGIT": r"\D",
        "CATEGORY_WORD": r"\w",
        "CATEGORY_NOT_WORD": r"\W",
        "CATEGORY_SPACE": r"\s",
        "CATEGORY_NOT_SPACE": r"\S",
    }.get(name, r"[^\s\S]")


def _class_char(items: list[Any], rng: random.Random | None) -> str:
    negated = bool(items) and str(items[0][0]) == "NEGATE"
    members = items[1:] if negated else items
    if negated:
        for char in _OUTSIDE_CANDIDATES:
            if not _in_set(members, char):
                return char
        return "\x01"
    choices: list[str] = []
    for op, value in members:
        name = str(op)
        if name == "LITERAL":
            choices.append(chr(value))
        elif name == "RANGE":
            low, high = value
            choices.append(chr(low) if rng is None else chr(rng.randint(low, high)))
        elif name == "CATEGORY":
            choices.append(_CATEGORY_CHARS.get(str(value), "a"))
    if not choices:
        return "a"
    return choices[0] if rng is None else rng.choice(choices)


def _walk(tree: Iterable[Any], rng: random.Random | None, out: list[str]) -> None:
    """Append one string ``tree`` matches: the smallest when ``rng`` is None.

    Stops adding once the text is ``_MAX_TEXT`` long: a sample only has to
    reach the part where two versions differ.
    """
    for op, value in tree:
        if len(out) > _MAX_TEXT:
            return
        name = str(op)
        if name == "LITERAL":
            out.append(chr(value))
        elif name == "NOT_LITERAL":
            out.append("a" if chr(value) != "a" else "b")
        elif name == "ANY":
            out.append("a" if rng is None else rng.choice("a/.:"))
        elif name == "IN":
            out.append(_class_char(list(value), rng))
        elif name == "BRANCH":
            branches = value[1]
            _walk(branches[0] if rng is None else rng.choice(branches), rng, out)
        elif name == "SUBPATTERN":
            _walk(value[-1], rng, out)
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, body = value
            high = min(high, low + _MAX_REPEAT_EXTRA)
            times = low if rng is None else rng.randint(low, max(low, high))
            for _ in range(times):
                if len(out) > _MAX_TEXT:
                    break
                _walk(body, rng, out)
        # AT (anchors), assertions and group references add nothing.


@lru_cache(maxsize=512)
def regex_texts(source: str, flags: str) -> tuple[str, ...]:
    """The smallest string ``/source/flags`` is written to match and a few seeded variants."""
    try:
        tree = sre.parse(source)
    except (re.error, RecursionError, OverflowError, ValueError):
        # RE2 syntax Python does not parse (`\pL`, ...): no samples, not a crash.
        return ()
    found: dict[str, None] = {}
    rng = random.Random(f"{flags}/{source}")
    try:
        for walk_rng in (None, *[rng] * VARIANTS):
            out: list[str] = []
            _walk(tree, walk_rng, out)
            found["".join(out)] = None
    except RecursionError:  # nesting deeper than a sample is worth
        pass
    return tuple(found)


@lru_cache(maxsize=512)
def _compiled(source: str, flags: str) -> Any:
    try:
        return re2.compile(regex_with_flags(source, flags), re2_options())
    except re2.error:
        return None


def telling_samples(regexes: Iterable[tuple[str, str]]) -> list[str]:
    """Strings that split ``regexes`` every way they can be split, one per verdict pattern.

    For two versions of one pattern, that is a string both accept, one only
    the old accepts, one only the new accepts, and one neither does, when such
    strings are among the candidates.
    """
    pairs = list(dict.fromkeys(regexes))
    compiled = [_compiled(source, flags) for source, flags in pairs]
    kept: dict[tuple[bool, ...], str] = {}
    budget = MAX_SEARCHES // max(1, len(compiled))
    for source, flags in pairs:
        for text in regex_texts(source, flags):
            for prefix in PREFIXES:
                for suffix in SUFFIXES:
                    budget -= 1
                    if budget < 0:
                        return list(kept.values())
                    candidate = prefix + text + suffix
                    verdicts = tuple(
                        regex is not None and regex.search(candidate) is not None
                        for regex in compiled
                    )
                    kept.setdefault(verdicts, candidate)
                    if len(kept) >= MAX_PER_PATH:
                        return list(kept.values())
    return list(kept.values())

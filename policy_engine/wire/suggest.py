"""Did-you-mean, for every layer: one notion of "the name you probably meant".

It lives in ``wire`` because both sides of the layer diamond suggest names (the
checker for patterns, events and fields; the chain for selected interceptors).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

CUTOFF = 0.6
"""difflib's similarity ratio a lookalike needs (its own default)."""


def closest(
    word: str, candidates: Iterable[object], n: int = 1, cutoff: float = CUTOFF
) -> list[str]:
    """Up to ``n`` likely intended names, best first.

    The same letters ignoring case, ``_`` and ``-`` come first; then lookalikes by
    similarity; failing those, a name that holds the other (`PHONE_NUMBER` for
    `PHONE`), which the ratio alone misses when the extra part is long.
    """
    names = list(dict.fromkeys(str(c) for c in candidates))
    same = [c for c in names if c != word and _fold(c) == _fold(word)]
    alike = difflib.get_close_matches(word, names, n=n, cutoff=cutoff)
    found = same + [c for c in alike if c not in same]
    if not found:
        lowered = word.lower()
        found = sorted(
            (
                c
                for c in names
                if min(len(c), len(word)) >= 3 and (c.lower() in lowered or lowered in c.lower())
            ),
            key=lambda c: -difflib.SequenceMatcher(None, word, c).ratio(),
        )
    return found[:n]


def did_you_mean(word: str, candidates: Iterable[object], cutoff: float = CUTOFF) -> str | None:
    """``did you mean `NAME`?`` for the closest candidate, or None when none is close."""
    close = closest(word, candidates, cutoff=cutoff)
    return f"did you mean `{close[0]}`?" if close else None


def _fold(name: str) -> str:
    return name.replace("_", "").replace("-", "").lower()

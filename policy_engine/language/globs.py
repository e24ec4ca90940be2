"""Exact reasoning about the language's globs (`*` any run, `?` one character).

Used by analysis to answer "can this glob match that name" and "can these two
globs match a common name" without sampling. Containment between two globs
with wildcards is only answered where it is certain; elsewhere ``None``.

Policy files are untrusted input, so every question here costs at most
linear time in the two globs, except matching a glob against a text without
`*` (greedy, at most ``MAX_GLOB_STEPS`` steps): past that the answer is
``None``, "cannot be told", and the caller says so in a diagnostic.
"""

from __future__ import annotations

from functools import cache

MAX_GLOB_STEPS = 200_000
"""Character comparisons one greedy match may spend before it gives up."""


class GlobBudgetExceeded(Exception):
    """A glob question needed more than ``MAX_GLOB_STEPS`` comparisons."""


def glob_matches(glob: str, text: str) -> bool:
    """Whole-string match, iteratively (no recursion on long globs)."""
    result = _greedy(glob, text, text_wild=False, cap=None)
    assert result is not None
    return result


def glob_matches_bounded(glob: str, text: str) -> bool | None:
    """``glob_matches`` within ``MAX_GLOB_STEPS`` comparisons; ``None`` past it."""
    return _greedy(glob, text, text_wild=False, cap=MAX_GLOB_STEPS)


def _greedy(glob: str, text: str, *, text_wild: bool, cap: int | None) -> bool | None:
    """The classic one-backtrack glob match; with ``text_wild`` a `?` in the text fits anything.

    Placing each run between stars at its leftmost fit is always safe because
    what follows starts with `*`, so the one backtrack point suffices.
    """
    g = t = steps = 0
    star, mark = -1, 0
    while t < len(text):
        steps += 1
        if cap is not None and steps > cap:
            return None
        symbol = glob[g] if g < len(glob) else ""
        if (
            symbol
            and symbol != "*"
            and (symbol == "?" or symbol == text[t] or (text_wild and text[t] == "?"))
        ):
            g += 1
            t += 1
        elif symbol == "*":
            star, mark = g, t
            g += 1
        elif star >= 0:
            g, mark = star + 1, mark + 1
            t = mark
        else:
            return False
    while g < len(glob) and glob[g] == "*":
        g += 1
    return g == len(glob)


def _fit(a: str, b: str) -> bool:
    """Whether two wildcard-free-of-`*` runs, aligned at their start, agree where both are set."""
    return all(x == y or x == "?" or y == "?" for x, y in zip(a, b, strict=False))


@cache
def globs_intersect(a: str, b: str) -> bool | None:
    """Whether some string matches both globs; ``None`` when it cannot be told in budget.

    With a `*` in each, a common string exists exactly when the runs before the
    first `*` agree and the runs after the last `*` agree (each star absorbs the
    other glob's middle). Without a `*` in one, that one is a fixed-length
    template matched greedily by the other.
    """
    if "*" not in a:
        a, b = b, a
    if "*" not in b:
        if "*" not in a:
            return len(a) == len(b) and _fit(a, b)
        return _greedy(a, b, text_wild=True, cap=MAX_GLOB_STEPS)
    head_a, head_b = a.split("*", 1)[0], b.split("*", 1)[0]
    tail_a, tail_b = a.rsplit("*", 1)[1], b.rsplit("*", 1)[1]
    return _fit(head_a, head_b) and _fit(tail_a[::-1], tail_b[::-1])


def literal_head(glob: str) -> str:
    """The run before the first wildcard: every string the glob matches starts with it."""
    for index, char in enumerate(glob):
        if char in "*?":
            return glob[:index]
    return glob


def glob_within(inner: str, outer: str) -> bool | None:
    """Whether every string ``inner`` matches is matched by ``outer``; ``None`` if unsure."""
    if not any(c in inner for c in "*?"):
        return glob_matches_bounded(outer, inner)
    if outer == "*" or inner == outer:
        return True
    intersect = globs_intersect(inner, outer)
    if intersect is not True:
        return intersect if intersect is False else None
    prefix = outer.rstrip("*")
    if outer.endswith("*") and not any(c in prefix for c in "*?"):
        head = inner.split("*")[0].split("?")[0]
        return True if head.startswith(prefix) else None
    return None

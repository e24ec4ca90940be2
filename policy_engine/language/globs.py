"""Exact reasoning about the language's globs (`*` any run, `?` one character).

Used by analysis to answer "can this glob match that name" and "can these two
globs match a common name" without sampling. Containment between two globs
with wildcards is only answered where it is certain; elsewhere ``None``.
"""

from __future__ import annotations

from functools import cache


def glob_matches(glob: str, text: str) -> bool:
    """Whole-string match, iteratively (no recursion on long globs)."""
    g = t = 0
    star, mark = -1, 0
    while t < len(text):
        if g < len(glob) and (glob[g] == "?" or (glob[g] != "*" and glob[g] == text[t])):
            g += 1
            t += 1
        elif g < len(glob) and glob[g] == "*":
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


def _closure(a: str, b: str, states: set[tuple[int, int]]) -> set[tuple[int, int]]:
    """Add the states reached by letting a `*` match nothing."""
    stack = list(states)
    while stack:
        i, j = stack.pop()
        for nxt in (
            (i + 1, j) if i < len(a) and a[i] == "*" else None,
            (i, j + 1) if j < len(b) and b[j] == "*" else None,
        ):
            if nxt is not None and nxt not in states:
                states.add(nxt)
                stack.append(nxt)
    return states


def _step(glob: str, position: int, char: str | None) -> int | None:
    """Where ``glob`` is after consuming ``char`` (``None`` stands for any other character)."""
    if position >= len(glob):
        return None
    symbol = glob[position]
    if symbol == "*":
        return position
    if symbol == "?" or symbol == char:
        return position + 1
    return None


@cache
def globs_intersect(a: str, b: str) -> bool:
    """Whether some string matches both globs (a product automaton, searched exhaustively)."""
    alphabet: list[str | None] = [*sorted({c for c in a + b if c not in "*?"}), None]
    start = _closure(a, b, {(0, 0)})
    seen = set(start)
    frontier = list(start)
    while frontier:
        i, j = frontier.pop()
        if i == len(a) and j == len(b):
            return True
        for char in alphabet:
            ni, nj = _step(a, i, char), _step(b, j, char)
            if ni is None or nj is None:
                continue
            for state in _closure(a, b, {(ni, nj)}):
                if state not in seen:
                    seen.add(state)
                    frontier.append(state)
    return False


def glob_within(inner: str, outer: str) -> bool | None:
    """Whether every string ``inner`` matches is matched by ``outer``; ``None`` if unsure."""
    if not any(c in inner for c in "*?"):
        return glob_matches(outer, inner)
    if outer == "*" or inner == outer:
        return True
    if not globs_intersect(inner, outer):
        return False
    prefix = outer.rstrip("*")
    if outer.endswith("*") and not any(c in prefix for c in "*?"):
        head = inner.split("*")[0].split("?")[0]
        return True if head.startswith(prefix) else None
    return None

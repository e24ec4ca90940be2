"""The strings among a rule's candidates, joined once per evaluation for every rule that scans them.

Several predicates often read the same values (six `matches` rules and two
`url_decode` ones over `$.arguments..*`); candidates lists are memoised per
payload (`conditions._memoised`), so keying the column on the list's
identity lets them share one join into UTF-8 and one list of offsets. A
text function that changes nothing (`url_decode` of text without `%`) hands
on the column's own list of strings, whose column shares the same join.
"""

from __future__ import annotations

from typing import Any

from .matchers import joined_bytes

Candidates = list[tuple[Any, Any]]


class TextColumn:
    """The strings of a candidates list, where each one sits in it, and their join."""

    __slots__ = ("_joined", "_source", "_strings", "positions", "texts")

    def __init__(self, candidates: Candidates, source: TextColumn | None = None) -> None:
        self.positions = [k for k, (value, _) in enumerate(candidates) if isinstance(value, str)]
        self.texts: list[str] = [candidates[k][0] for k in self.positions]
        self._joined: tuple[bytes, list[int]] | None = None
        self._strings: Candidates | None = None
        # A column with the same texts, whose join this one reuses.
        self._source = source

    def joined(self) -> tuple[bytes, list[int]]:
        """The texts joined with newlines as UTF-8, and each one's byte start (`joined_bytes`)."""
        if self._joined is None:
            self._joined = (
                self._source.joined() if self._source is not None else joined_bytes(self.texts)
            )
        return self._joined

    def strings(self, candidates: Candidates, memo: dict[Any, Any]) -> Candidates:
        """The string candidates of ``candidates`` (the list this column was made of).

        One list per column, registered with a column of its own that shares
        this one's texts and join.
        """
        if len(self.positions) == len(candidates):
            return candidates
        if self._strings is None:
            self._strings = [candidates[k] for k in self.positions]
            derived = TextColumn(self._strings, source=self)
            memo[("column", id(self._strings))] = (self._strings, derived)
        return self._strings


def column_of(candidates: Candidates, memo: dict[Any, Any]) -> TextColumn:
    """The column of ``candidates``, built once per list object within one evaluation."""
    key = ("column", id(candidates))
    cached = memo.get(key)
    if cached is not None and cached[0] is candidates:
        column: TextColumn = cached[1]
        return column
    column = TextColumn(candidates)
    memo[key] = (candidates, column)
    return column

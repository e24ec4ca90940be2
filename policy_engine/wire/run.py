"""What one chain run's providers may remember between its invokes, and nothing longer.

A chain hands the same payload object to every validator of a run, and a
mutator's output to the next interceptor; a provider that measured it once
(its size, its encoding, what its regexes found) can answer the next invoke
of the same run from that. Such memos are keyed on a payload object's
identity, which is only a promise within one run: the caller owns the
payload before and after and may change it in place between two calls. So
the memos live here, in a `RunState` the chain makes afresh for each run,
never on the provider, which outlives every run and is shared by them all.
An invoke made without a run (a direct ``invoke``) measures afresh.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

_T = TypeVar("_T")


class RunState:
    """One chain run's scratch space: one slot per provider, made on first use."""

    __slots__ = ("_slots",)

    def __init__(self) -> None:
        self._slots: dict[int, tuple[object, Any]] = {}

    def slot(self, owner: object, make: Callable[[], _T]) -> _T:
        """``owner``'s slot in this run, made by ``make`` the first time it is asked for.

        Keyed on the owner's identity (kept alive by the slot, so the key is
        never reused); an owner stores one value, of the type it makes.
        """
        entry = self._slots.get(id(owner))
        if entry is not None and entry[0] is owner:
            value: _T = entry[1]
            return value
        made = make()
        self._slots[id(owner)] = (owner, made)
        return made

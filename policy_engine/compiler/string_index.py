"""The strings under a value, found in one walk, rewritten in one copy-on-write pass.

A `matching` rule first needs every distinct string its path reaches (one
scan of them all, `TextMatcher.hits_many`), then the same value with the
strings that hit rewritten. Walking the value twice (once to collect, once
to rebuild every container on the way) was most of a redaction's Python
cost on a message full of personal data. `StringIndex` walks once and keeps,
for every string, the container holding it and its key there, and for every
container its own parent and key; `rewrite` then copies only the containers
on the way from a changed string up to the value, each once, as the
recursive rebuild did (a container is copied only when something below it
changed; nothing is ever modified in place).

The index is made per evaluation, of the value as found: it lives in the
rule's invoke and is never kept on the compiled policy set.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

# `(container, parent position, key in the parent)`; the value itself has parent -1.
_Container = tuple[Any, int, Any]
# `(text, position of the container holding it, key there)`; -1 when the value is the string.
_Slot = tuple[str, int, Any]


# The types JSON gives that hold no string: skipped without an `isinstance` each.
_SCALARS = frozenset((int, float, bool, type(None)))


class StringIndex:
    """Every string under ``root`` (not keys), where it sits, in pre-order."""

    __slots__ = ("containers", "root", "slots")

    def __init__(self, root: Any) -> None:
        self.root = root
        containers: list[_Container] = []
        slots: list[_Slot] = []
        self.containers = containers
        self.slots = slots
        if isinstance(root, str):
            slots.append((root, -1, None))
            return
        if not isinstance(root, dict | list):
            return
        # Depth first with each open container's own iterator on the stack: a
        # container's strings are slotted as met, and a child container is
        # entered at once, its parent's iterator resuming after it. So strings
        # come in document order and containers in pre-order, the order the
        # recursive rebuild visited them.
        add_slot = slots.append
        add_container = containers.append
        stack: list[tuple[Any, int]] = []
        push = stack.append
        pop = stack.pop
        add_container((root, -1, None))
        position = 0
        items: Any = enumerate(root) if isinstance(root, list) else iter(root.items())
        while True:
            for name, value in items:
                kind = type(value)
                if kind is str:
                    add_slot((value, position, name))
                    continue
                if kind is dict:
                    below: Any = iter(value.items())
                elif kind is list:
                    below = enumerate(value)
                elif kind in _SCALARS:
                    continue
                elif isinstance(value, str):
                    add_slot((value, position, name))
                    continue
                elif isinstance(value, dict):
                    below = iter(value.items())
                elif isinstance(value, list):
                    below = enumerate(value)
                else:
                    continue
                push((items, position))
                add_container((value, position, name))
                position = len(containers) - 1
                items = below
                break
            else:
                if not stack:
                    return
                items, position = pop()

    def texts(self, into: dict[str, None]) -> None:
        """Add every distinct string, in first-seen order, to ``into``."""
        for slot in self.slots:
            into[slot[0]] = None

    def rewrite(
        self, rewrite: Callable[[str], str], unchanged: Mapping[str, object] | None = None
    ) -> Any:
        """The root with each string ``s`` replaced by ``rewrite(s)``, copying only the
        containers on the way to a string that came back as another object.

        ``unchanged`` maps strings to a falsy value when ``rewrite`` is known to
        return them as they are (a `matching` rule's strings without hits), which
        spares a call per string.
        """
        containers = self.containers
        copies: list[Any] = [None] * len(containers)
        root = self.root
        known = unchanged if unchanged is not None else {}
        for text, owner, key in self.slots:
            if not known.get(text, True):
                continue
            new = rewrite(text)
            if new is text:
                continue
            if owner < 0:
                return new
            copy = copies[owner]
            if copy is None:
                copy = _copy_up(owner, containers, copies)
            copy[key] = new
        return root if not containers or copies[0] is None else copies[0]


def _copy_up(position: int, containers: list[_Container], copies: list[Any]) -> Any:
    """A copy of container ``position``, linked into copies of its ancestors (made as needed)."""
    node, parent, key = containers[position]
    copy = _copy(node)
    copies[position] = copy
    while parent >= 0:
        above = copies[parent]
        if above is not None:
            above[key] = copy
            break
        node, next_parent, next_key = containers[parent]
        above = _copy(node)
        copies[parent] = above
        above[key] = copy
        copy, parent, key = above, next_parent, next_key
    return copies[position]


def _copy(node: Any) -> Any:
    """A plain copy, as the rebuild made one (`list(...)` of a list, `dict(...)` else)."""
    return list(node) if isinstance(node, list) else dict(node)

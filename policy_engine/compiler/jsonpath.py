"""Compile a parsed JSONPath into fast evaluators of our own.

jsonpath-ng is only used to parse (``language.path_syntax``).  Evaluating with it
costs milliseconds per message (it wraps every visited node in a context
object), while policies run on every MCP message; so each step is compiled
once into a small closure and evaluation is a tight loop over plain dicts and
lists.

Semantics follow jsonpath-ng's ext parser, so the two agree on every supported
path (the property tests cross-check them):

* only JSON values are expected: dict, list, str, int, float, bool, None (the
  containers are plain ``dict`` and ``list``, as ``json.loads`` makes them;
  exact type checks keep the hot loops fast);
* a name selects nothing from a list or a scalar, an index or slice nothing
  from an object; ``*`` and filters select the members of an object or the
  elements of a list;
* matches come in document order; ``..`` walks pre-order, and a node's own
  matches come before those of its descendants;
* locations use non-negative list indexes, so ``[-1]`` reports ``[n-1]``.

Updates are copy-on-write: the input is never modified, only the containers on
the way to a change are copied, and when nothing changes the original object
comes back.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final, TypeAlias, TypeVar

from ..language.path_syntax import (
    Descend,
    Field,
    Filter,
    Index,
    PathSyntax,
    Slice,
    Step,
    Wildcard,
)
from .values import compare

Location: TypeAlias = tuple[str | int, ...]
Match: TypeAlias = tuple[Any, Location]
UpdateFn: TypeAlias = Callable[[Any, Location], Any]
# Compiles a filter's language condition into a test on one element.
ElementTest: TypeAlias = Callable[[Any], Callable[[Any], bool]]

DEFAULT_MAX_DEPTH: Final = 64


class Action(enum.Enum):
    """What an update callback returns instead of a new value."""

    REMOVE = "REMOVE"
    KEEP = "KEEP"

    def __repr__(self) -> str:
        return self.value


REMOVE: Final = Action.REMOVE
"""Returned by an update callback: delete the key or list element."""
KEEP: Final = Action.KEEP
"""Returned by an update callback: leave the value as it is."""


class PayloadTooDeep(ValueError):
    """A ``..`` walk met containers nested deeper than the limit.

    Descending uses an explicit stack, so this is a policy decision (bounded
    work per message, no pathological payloads), not a recursion guard.
    """

    def __init__(self, depth: int, max_depth: int = DEFAULT_MAX_DEPTH) -> None:
        super().__init__(f"payload nesting depth {depth} exceeds the limit of {max_depth}")
        self.depth = depth
        self.max_depth = max_depth


_MISSING: Final = object()
_MAX_STRUCTURAL_STEPS: Final = 100
_K = TypeVar("_K", str, int)

# One compiled step: append the matches below one (value, location) to ``out``.
_Selector: TypeAlias = Callable[[Any, Location, list[Match]], None]
_Finder: TypeAlias = Callable[[Any], list[Match]]


# --------------------------------------------------------------------------- selectors


def _select_field(name: str) -> _Selector:
    def select(node: Any, loc: Location, out: list[Match]) -> None:
        if type(node) is dict and name in node:
            out.append((node[name], (*loc, name)))

    return select


def _select_fields(names: tuple[str, ...]) -> _Selector:
    if len(names) == 1:
        return _select_field(names[0])

    def select(node: Any, loc: Location, out: list[Match]) -> None:
        if type(node) is dict:
            for name in names:
                if name in node:
                    out.append((node[name], (*loc, name)))

    return select


def _select_wildcard(node: Any, loc: Location, out: list[Match]) -> None:
    if type(node) is dict:
        out.extend((value, (*loc, key)) for key, value in node.items())
    elif type(node) is list:
        out.extend((value, (*loc, index)) for index, value in enumerate(node))


def _select_indexes(indexes: tuple[int, ...]) -> _Selector:
    def select(node: Any, loc: Location, out: list[Match]) -> None:
        if type(node) is list:
            size = len(node)
            for index in indexes:
                if -size <= index < size:
                    position = index % size
                    out.append((node[position], (*loc, position)))

    return select


def _select_slice(step: Slice) -> _Selector:
    bounds = slice(step.start, step.stop, step.step)

    def select(node: Any, loc: Location, out: list[Match]) -> None:
        if type(node) is list:
            out.extend((node[i], (*loc, i)) for i in range(len(node))[bounds])

    return select


def _select_filter(step: Filter, element_test: ElementTest | None) -> _Selector:
    test = _compile_test(step, element_test)

    def select(node: Any, loc: Location, out: list[Match]) -> None:
        if type(node) is dict:
            out.extend((value, (*loc, key)) for key, value in node.items() if test(value))
        elif type(node) is list:
            out.extend((value, (*loc, i)) for i, value in enumerate(node) if test(value))

    return select


def _push_children(push: Callable[[Match], None], node: Any, loc: Location) -> None:
    """Push child containers in reverse, so that popping visits them in document order.

    Scalars are skipped: no step that can follow ``..`` selects anything from them.
    """
    if type(node) is dict:
        for key, value in reversed(node.items()):
            kind = type(value)
            if kind is dict or kind is list:
                push((value, (*loc, key)))
    else:
        for index in range(len(node) - 1, -1, -1):
            value = node[index]
            kind = type(value)
            if kind is dict or kind is list:
                push((value, (*loc, index)))


def _select_descend(max_depth: int) -> _Selector:
    """``..``: the node itself and every container below it, pre-order, explicit stack."""

    def select(node: Any, loc: Location, out: list[Match]) -> None:
        if type(node) is not dict and type(node) is not list:
            return
        stack: list[Match] = [(node, loc)]
        while stack:
            current, where = stack.pop()
            if len(where) >= max_depth:
                raise PayloadTooDeep(len(where) + 1, max_depth)
            out.append((current, where))
            _push_children(stack.append, current, where)

    return select


def _select_descend_fields(names: tuple[str, ...], max_depth: int) -> _Selector:
    """``..name``: one walk that looks the names up as it goes (the redaction hot path)."""

    def select(node: Any, loc: Location, out: list[Match]) -> None:
        _walk_fields(node, loc, names, max_depth, out.append)

    return select


def _walk_fields(
    node: Any,
    loc: Location,
    names: tuple[str, ...],
    max_depth: int,
    emit: Callable[[Match], None],
) -> None:
    """Emit each member named in ``names`` of every container from ``node`` down, pre-order.

    Same walk as :func:`_select_descend`, depth first with each open
    container's iterator on a stack and the way down in one list of keys:
    this loop runs once per container of every message, and a location is
    built only for what it emits.
    """
    if type(node) is not dict and type(node) is not list:
        return
    stack: list[Iterator[tuple[Any, Any]]] = []
    push = stack.append
    pop = stack.pop
    keys: list[str | int] = list(loc)
    enter = keys.append
    leave = keys.pop
    current: Any = node
    while True:
        if len(keys) >= max_depth:
            raise PayloadTooDeep(len(keys) + 1, max_depth)
        items: Iterator[tuple[Any, Any]]
        if type(current) is dict:
            for name in names:
                if name in current:
                    emit((current[name], (*keys, name)))
            items = iter(current.items())
        else:
            items = enumerate(current)
        while True:
            for key, value in items:
                kind = type(value)
                if kind is dict or kind is list:
                    push(items)
                    enter(key)
                    current = value
                    break
            else:
                if not stack:
                    return
                items = pop()
                leave()
                continue
            break


def _select_descend_all(max_depth: int) -> _Selector:
    """``..*``: every value below the node, children of each container in pre-order.

    The same walk as :func:`_select_descend` with the wildcard fused in, so
    each container is visited once (the argument guards read ``$.arguments..*``).
    """

    def select(node: Any, loc: Location, out: list[Match]) -> None:
        if type(node) is not dict and type(node) is not list:
            return
        stack: list[Match] = [(node, loc)]
        pop = stack.pop
        emit = out.append
        while stack:
            current, where = pop()
            if len(where) >= max_depth:
                raise PayloadTooDeep(len(where) + 1, max_depth)
            below: list[Match] = []
            if type(current) is dict:
                for key, value in current.items():
                    match = (value, (*where, key))
                    emit(match)
                    kind = type(value)
                    if kind is dict or kind is list:
                        below.append(match)
            else:
                for index, value in enumerate(current):
                    match = (value, (*where, index))
                    emit(match)
                    kind = type(value)
                    if kind is dict or kind is list:
                        below.append(match)
            stack.extend(reversed(below))

    return select


def _selector(step: Step, element_test: ElementTest | None) -> _Selector:
    if isinstance(step, Field):
        return _select_fields(step.names)
    if isinstance(step, Wildcard):
        return _select_wildcard
    if isinstance(step, Index):
        return _select_indexes(step.indexes)
    if isinstance(step, Slice):
        return _select_slice(step)
    if isinstance(step, Filter):
        return _select_filter(step, element_test)
    raise TypeError(f"not a selecting step: {step!r}")


def _selectors(
    steps: tuple[Step, ...], max_depth: int, element_test: ElementTest | None
) -> list[_Selector]:
    """One selector per step; ``..`` followed by names becomes a single fused walk."""
    selectors: list[_Selector] = []
    position = 0
    while position < len(steps):
        step = steps[position]
        following = steps[position + 1] if position + 1 < len(steps) else None
        if isinstance(step, Descend) and isinstance(following, Field):
            selectors.append(_select_descend_fields(following.names, max_depth))
            position += 2
            continue
        if isinstance(step, Descend) and isinstance(following, Wildcard):
            selectors.append(_select_descend_all(max_depth))
            position += 2
            continue
        if isinstance(step, Descend):
            selectors.append(_select_descend(max_depth))
        else:
            selectors.append(_selector(step, element_test))
        position += 1
    return selectors


def _chain(selectors: list[_Selector]) -> _Finder:
    """Apply the selectors step by step, which yields jsonpath-ng's (document) order."""
    if len(selectors) == 1:
        (only,) = selectors

        def find_one(doc: Any) -> list[Match]:
            out: list[Match] = []
            only(doc, (), out)
            return out

        return find_one

    def find(doc: Any) -> list[Match]:
        current: list[Match] = [(doc, ())]
        for select in selectors:
            out: list[Match] = []
            for node, loc in current:
                select(node, loc, out)
            if not out:
                return out
            current = out
        return current

    return find


# --------------------------------------------------------------------------- filters


def _compile_target(target: tuple[Step, ...]) -> Callable[[Any], Any]:
    """Resolve ``@.a[0]`` on a candidate; ``_MISSING`` when any step finds nothing."""
    keys: list[str | int] = []
    for step in target:
        if isinstance(step, Field) and len(step.names) == 1:
            keys.append(step.names[0])
        elif isinstance(step, Index) and len(step.indexes) == 1:
            keys.append(step.indexes[0])
        else:
            raise ValueError(f"filter targets must be singular, got {step!r}")

    def resolve(value: Any) -> Any:
        for key in keys:
            value = _child(value, key)
            if value is _MISSING:
                break
        return value

    return resolve


def _compile_test(step: Filter, element_test: ElementTest | None) -> Callable[[Any], bool]:
    """The filter's test on one element, with the language's comparison semantics.

    A filter written with the language's predicates is compiled by ``element_test``
    (the compiler's condition compiler); plain comparisons are answered here.
    """
    if step.condition is not None:
        if element_test is None:
            raise ValueError(f"a filter with a condition needs a condition compiler: {step!r}")
        return element_test(step.condition)
    resolve = _compile_target(step.target)
    if step.op == "exists":
        return lambda candidate: resolve(candidate) is not _MISSING
    op, literal = step.op, step.value

    def test(candidate: Any) -> bool:
        value = resolve(candidate)
        # A missing member makes every comparison false, `!=` included (values.py).
        return value is not _MISSING and compare(op, value, literal)

    return test


# --------------------------------------------------------------------------- singular paths


def _child(node: Any, key: str | int) -> Any:
    """The member or element at ``key``, or ``_MISSING`` (wrong kind, absent, out of range)."""
    if isinstance(key, str):
        return node.get(key, _MISSING) if type(node) is dict else _MISSING
    if type(node) is list and -len(node) <= key < len(node):
        return node[key]
    return _MISSING


def _walk(doc: Any, keys: tuple[str | int, ...]) -> tuple[list[Any], Location, Any]:
    """Follow a singular path: (containers passed, normalized location, value or _MISSING).

    On a miss the containers end with the one that lacks the next key.
    """
    parents: list[Any] = []
    location: list[str | int] = []
    node = doc
    for key in keys:
        child = _child(node, key)
        if child is _MISSING:
            parents.append(node)
            return parents, tuple(location), _MISSING
        parents.append(node)
        location.append(key if isinstance(key, str) or key >= 0 else key + len(node))
        node = child
    return parents, tuple(location), node


def _rebuild_chain(parents: list[Any], location: Location, leaf: Any) -> Any:
    """Copy each container on the path, bottom-up, with ``leaf`` (or its removal) at the end."""
    new = parents[-1].copy()
    if leaf is REMOVE:
        del new[location[-1]]
    else:
        new[location[-1]] = leaf
    for parent, key in zip(reversed(parents[:-1]), reversed(location[:-1]), strict=True):
        copy = parent.copy()
        copy[key] = new
        new = copy
    return new


def _singular_finder(keys: tuple[str | int, ...]) -> _Finder:
    if all(isinstance(key, str) for key in keys):
        # `$.a.b.c`: the location is known in advance; just follow the names.
        def find_names(doc: Any) -> list[Match]:
            node = doc
            for key in keys:
                if type(node) is not dict:
                    return []
                node = node.get(key, _MISSING)
                if node is _MISSING:
                    return []
            return [(node, keys)]

        return find_names

    def find(doc: Any) -> list[Match]:
        _, location, value = _walk(doc, keys)
        return [] if value is _MISSING else [(value, location)]

    return find


# --------------------------------------------------------------------------- structural updates

# Update the matches below one node: (new node, locations changed).  A node that
# comes back unchanged is the same object, which is what keeps updates
# copy-on-write: only containers on the way to a change get copied.
_Updater: TypeAlias = Callable[[Any, Location, UpdateFn], tuple[Any, int]]


def _update_leaf(value: Any, loc: Location, fn: UpdateFn) -> tuple[Any, int]:
    result = fn(value, loc)
    if result is KEEP or result is value:
        return value, 0
    return result, 1


def _update_members(
    node: dict[str, Any],
    members: Iterable[tuple[str, Any]],
    loc: Location,
    fn: UpdateFn,
    inner: _Updater,
) -> tuple[Any, int]:
    copy: dict[str, Any] | None = None
    changed = 0
    for key, value in members:
        result, count = inner(value, (*loc, key), fn)
        if count:
            if copy is None:
                copy = node.copy()
            if result is REMOVE:
                del copy[key]
            else:
                copy[key] = result
            changed += count
    return (node if copy is None else copy), changed


def _update_elements(
    node: list[Any],
    elements: Iterable[tuple[int, Any]],
    loc: Location,
    fn: UpdateFn,
    inner: _Updater,
) -> tuple[Any, int]:
    copy: list[Any] | None = None
    removed: set[int] = set()
    changed = 0
    for index, value in elements:
        result, count = inner(value, (*loc, index), fn)
        if count:
            if copy is None:
                copy = node.copy()
            if result is REMOVE:
                removed.add(index)  # deleted at the end, so later indexes stay valid
            else:
                copy[index] = result
            changed += count
    if copy is None:
        return node, 0
    if removed:
        copy = [value for index, value in enumerate(copy) if index not in removed]
    return copy, changed


def _updater(step: Step, inner: _Updater, element_test: ElementTest | None) -> _Updater:
    """Wrap ``inner`` (the rest of the path) with the update for one selecting step."""
    if isinstance(step, Field):
        names = tuple(dict.fromkeys(step.names))  # ['a','a'] changes `a` once

        def update_fields(node: Any, loc: Location, fn: UpdateFn) -> tuple[Any, int]:
            if type(node) is not dict:
                return node, 0
            members = [(name, node[name]) for name in names if name in node]
            return _update_members(node, members, loc, fn, inner)

        return update_fields
    if isinstance(step, Wildcard | Filter):
        test = _compile_test(step, element_test) if isinstance(step, Filter) else None

        def update_children(node: Any, loc: Location, fn: UpdateFn) -> tuple[Any, int]:
            if type(node) is dict:
                members = node.items() if test is None else _passing(node.items(), test)
                return _update_members(node, members, loc, fn, inner)
            if type(node) is list:
                elements = enumerate(node) if test is None else _passing(enumerate(node), test)
                return _update_elements(node, elements, loc, fn, inner)
            return node, 0

        return update_children
    positions = _positions(step)

    def update_positions(node: Any, loc: Location, fn: UpdateFn) -> tuple[Any, int]:
        if type(node) is not list:
            return node, 0
        return _update_elements(node, [(i, node[i]) for i in positions(node)], loc, fn, inner)

    return update_positions


def _passing(
    pairs: Iterable[tuple[_K, Any]], test: Callable[[Any], bool]
) -> Iterator[tuple[_K, Any]]:
    return ((key, value) for key, value in pairs if test(value))


def _positions(step: Step) -> Callable[[list[Any]], Iterable[int]]:
    """The distinct, normalized list positions an Index or Slice step selects."""
    if isinstance(step, Index):
        indexes = step.indexes

        def index_positions(node: list[Any]) -> Iterable[int]:
            size = len(node)
            return dict.fromkeys(i % size for i in indexes if -size <= i < size)

        return index_positions
    if isinstance(step, Slice):
        bounds = slice(step.start, step.stop, step.step)
        return lambda node: range(len(node))[bounds]
    raise TypeError(f"not a selecting step: {step!r}")


def _structural_updater(steps: tuple[Step, ...], element_test: ElementTest | None) -> _Updater:
    """Compose the updaters of a path without ``..``, innermost (the leaf) first."""
    updater: _Updater = _update_leaf
    for step in reversed(steps):
        updater = _updater(step, updater, element_test)
    return updater


# --------------------------------------------------------------------------- copy-on-write patching


# The patch trie mirrors the changed part of the document: a dict per container
# on the way to a change, and at a changed key a 1-tuple holding the new value
# (or REMOVE).  Tuples, not a class, because this is the hot part of ``..``
# updates and a tuple is the cheapest box with an unambiguous type.
_Trie: TypeAlias = "dict[str | int, tuple[Any] | _Trie]"


def _plan(matches: list[Match], fn: UpdateFn, *, dedupe: bool) -> tuple[_Trie, int]:
    """Ask ``fn`` about each match and record the changes in a trie keyed by location.

    A match inside a value that was already replaced or removed is skipped (its
    old value is gone), so ``fn`` sees each location at most once and always
    sees the original value; ancestors must come before their descendants.
    """
    trie: _Trie = {}
    changed = 0
    seen: set[Location] = set()
    for value, loc in matches:
        if dedupe:
            if loc in seen:
                continue
            seen.add(loc)
        # Follow the trie as far as it goes towards loc's parent.
        node = trie
        depth = 0
        last = len(loc) - 1
        decided = False
        while depth < last:
            below = node.get(loc[depth])
            if below is None:
                break
            if isinstance(below, tuple):
                decided = True  # an ancestor was already replaced or removed
                break
            node = below
            depth += 1
        if decided:
            continue
        result = fn(value, loc)
        if result is KEEP or result is value:
            continue
        while depth < last:
            fresh: _Trie = {}
            node[loc[depth]] = fresh
            node = fresh
            depth += 1
        node[loc[last]] = (result,)
        changed += 1
    return trie, changed


def _apply(doc: Any, trie: _Trie) -> Any:
    """Copy the containers the trie names (top-down, no recursion) and patch the copies."""
    root = doc.copy()
    pending: list[tuple[Any, _Trie]] = [(root, trie)]
    while pending:
        container, changes = pending.pop()
        removed: set[int] = set()
        for key, change in changes.items():
            if isinstance(change, tuple):
                if change[0] is not REMOVE:
                    container[key] = change[0]
                elif type(container) is list:
                    removed.add(int(key))  # deleted below, at once, so indexes stay valid
                else:
                    del container[key]
            else:
                child = container[key].copy()
                container[key] = child
                pending.append((child, change))
        if removed:
            container[:] = [v for i, v in enumerate(container) if i not in removed]
    return root


# --------------------------------------------------------------------------- compiled path


class CompiledPath:
    """A path compiled for repeated evaluation; build with :func:`compile_path`."""

    __slots__ = ("_dedupe", "_find", "_keys", "_names_only", "_structural", "max_depth", "path")

    def __init__(
        self,
        path: PathSyntax,
        max_depth: int = DEFAULT_MAX_DEPTH,
        element_test: ElementTest | None = None,
    ) -> None:
        self.path = path
        self.max_depth = max_depth
        steps = path.steps
        self._keys: tuple[str | int, ...] | None = _singular_keys(steps)
        self._names_only = self._keys is not None and all(isinstance(k, str) for k in self._keys)
        self._dedupe = _may_repeat(steps)
        # Without `..` an update can follow the steps and copy as it returns;
        # with `..` it goes through find() and a patch trie (see `_plan`), as do
        # absurdly long paths, since each structural step costs two stack frames.
        structural = len(steps) <= _MAX_STRUCTURAL_STEPS and not any(
            isinstance(step, Descend) for step in steps
        )
        self._structural = _structural_updater(steps, element_test) if structural else None
        if self._keys is not None:
            self._find = _singular_finder(self._keys)
        else:
            self._find = _chain(_selectors(steps, max_depth, element_test))

    def __repr__(self) -> str:
        return f"CompiledPath({self.path.source!r})"

    @property
    def is_singular(self) -> bool:
        """True when the path can select at most one value."""
        return self._keys is not None

    def find(self, doc: Any) -> list[Match]:
        """Every (value, location) the path selects, in document order."""
        return self._find(doc)

    def values(self, doc: Any) -> list[Any]:
        """The selected values, in document order."""
        return [value for value, _ in self.find(doc)]

    def update(self, doc: Any, fn: UpdateFn) -> tuple[Any, int]:
        """Replace each match with ``fn(value, location)``, or drop it on ``REMOVE``.

        Returns the new document and how many locations changed; ``KEEP`` (or
        returning the very same object) changes nothing.  ``doc`` is never
        modified and untouched subtrees are shared with the result.

        ``fn`` sees original values, each location once, in document order (for
        paths with several ``..``: shallower locations first); a match inside a
        value that ``fn`` replaced or removed is skipped.  List removals refer
        to the original indexes.
        """
        if self._keys is not None:
            return self._update_singular(doc, fn, self._keys)
        if self._structural is not None:
            return self._structural(doc, (), fn)
        matches = self._find(doc)
        if not matches:
            return doc, 0
        if self._dedupe:
            # Several `..` can list a descendant before its ancestor; restore ancestor-first.
            matches.sort(key=lambda match: len(match[1]))
        trie, changed = _plan(matches, fn, dedupe=self._dedupe)
        return (_apply(doc, trie), changed) if changed else (doc, 0)

    def set(self, doc: Any, value: Any) -> tuple[Any, int]:
        """Set every match to ``value``; a singular path may also create what is missing.

        The final name of a singular path is added to an existing object when
        absent (``set $.arguments.safe = true``); for a path made only of names,
        missing intermediate objects are created as well.
        """
        if self._keys is None:
            return self.update(doc, lambda _old, _loc: value)
        parents, location, old = _walk(doc, self._keys)
        if old is not _MISSING:
            return self._update_singular(doc, lambda _old, _loc: value, self._keys)
        missing = self._keys[len(location) :]
        holder = parents[-1]
        creatable = type(holder) is dict and isinstance(missing[0], str)
        if not creatable or (len(missing) > 1 and not self._names_only):
            return doc, 0
        for key in reversed(missing[1:]):
            value = {key: value}
        return _rebuild_chain(parents, (*location, missing[0]), value), 1

    def _update_singular(
        self, doc: Any, fn: UpdateFn, keys: tuple[str | int, ...]
    ) -> tuple[Any, int]:
        parents, location, old = _walk(doc, keys)
        if old is _MISSING:
            return doc, 0
        result = fn(old, location)
        if result is KEEP or result is old:
            return doc, 0
        if not keys:
            if result is REMOVE:
                raise ValueError("cannot remove the document root")
            return result, 1
        return _rebuild_chain(parents, location, result), 1


def _singular_keys(steps: tuple[Step, ...]) -> tuple[str | int, ...] | None:
    """The keys of a path made only of single names and single indexes, else None."""
    keys: list[str | int] = []
    for step in steps:
        if isinstance(step, Field) and len(step.names) == 1:
            keys.append(step.names[0])
        elif isinstance(step, Index) and len(step.indexes) == 1:
            keys.append(step.indexes[0])
        else:
            return None
    return tuple(keys)


def _may_repeat(steps: tuple[Step, ...]) -> bool:
    """Whether one location can be selected twice (``['a','a']``, ``[0,-1]``, two ``..``).

    Only such paths pay for duplicate tracking during updates.
    """
    descends = sum(isinstance(step, Descend) for step in steps)
    return descends > 1 or any(
        (isinstance(step, Field) and len(set(step.names)) < len(step.names))
        or (isinstance(step, Index) and len(step.indexes) > 1)
        for step in steps
    )


def compile_path(
    path: PathSyntax,
    *,
    max_depth: int = DEFAULT_MAX_DEPTH,
    element_test: ElementTest | None = None,
) -> CompiledPath:
    """Compile ``path`` once; ``..`` raises :class:`PayloadTooDeep` past ``max_depth`` levels."""
    if max_depth < 1:
        raise ValueError("max_depth must be at least 1")
    return CompiledPath(path, max_depth, element_test)


def find_memoised(path: CompiledPath, doc: Any, memo: dict[Any, Any]) -> list[Match]:
    """``path.find(doc)``, computed once per document object within one evaluation.

    ``memo`` maps the path to the document it was found on and the result;
    it is read only for that same object, so a new payload (mutators copy on
    write) is found afresh. Callers only iterate the result, never change it.
    """
    cached = memo.get(path)
    if cached is not None and cached[0] is doc:
        found: list[Match] = cached[1]
        return found
    found = path.find(doc)
    memo[path] = (doc, found)
    return found


def descendant_fields(doc: Any, names: tuple[str, ...], max_depth: int) -> dict[str, list[Match]]:
    """What ``$..name`` finds for each of several names, from one walk.

    Each list is in the order the single path gives (containers in pre-order),
    under the same depth limit.
    """
    found: dict[str, list[Match]] = {name: [] for name in names}
    # Gathered in one list (a C append per match), then sorted out by name.
    matches: list[Match] = []
    _walk_fields(doc, (), names, max_depth, matches.append)
    for match in matches:
        found[match[1][-1]].append(match)  # type: ignore[index]
    return found


def patch(doc: Any, changes: dict[Location, Any]) -> Any:
    """``doc`` with the value at each location replaced, copying only the way there.

    No location may lie inside another; ``doc`` itself is never modified.
    Each container on the way is copied once, found again by its location:
    changes come in groups under one object (a record's `email` and `ssn`),
    whose way up is shared.
    """
    if not changes:
        return doc
    if REMOVE in changes.values():
        return _patch_trie(doc, changes)
    root = doc.copy()
    copies: dict[Location, Any] = {(): root}
    for location, value in changes.items():
        way = location[:-1]
        container = copies.get(way)
        if container is None:
            container = _copy_way(copies, way)
        container[location[-1]] = value
    return root


def _copy_way(copies: dict[Location, Any], way: Location) -> Any:
    """The copy of the container at ``way``, made with those above it as needed."""
    known = len(way) - 1
    while way[:known] not in copies:
        known -= 1
    node = copies[way[:known]]
    for depth in range(known, len(way)):
        key = way[depth]
        child = node[key].copy()
        node[key] = child
        node = child
        copies[way[: depth + 1]] = child
    return node


def _patch_trie(doc: Any, changes: dict[Location, Any]) -> Any:
    """`patch` through a trie, for changes that remove (`_apply` deletes list items last)."""
    trie: _Trie = {}
    for location, value in changes.items():
        node = trie
        for key in location[:-1]:
            below = node.get(key)
            if below is None:
                below = {}
                node[key] = below
            assert isinstance(below, dict), "a change inside another change"
            node = below
        node[location[-1]] = (value,)
    return _apply(doc, trie)

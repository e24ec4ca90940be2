"""Checks JSONPaths against the MCP payload schema of an event and phase.

The schemas are read from ``data/mcp_payloads.json``, generated from the
installed ``mcp_types`` by ``scripts/gen_mcp_schemas.py``: importing the MCP SDK
or pydantic here would cost about a second per ``policyc check``, so this module
is stdlib only and loads the file once, on first use.

A path is walked step by step over the set of schemas it may be at (unions
such as content blocks fan out), and is accepted as soon as it reaches a part
of the payload that can hold anything (``arguments``, ``_meta``,
``structuredContent``, ``..``). MCP objects are treated as closed, although
the SDK tolerates unknown keys, because a misspelled field silently matching
nothing is the mistake this check exists to catch.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from types import MappingProxyType
from typing import Any, Final

from ..wire.suggest import closest
from .path_syntax import Descend, Field, Filter, Index, PathSyntax, Slice, Step, Wildcard

__all__ = [
    "FieldDoc",
    "PathProblem",
    "check_path",
    "describe_path",
    "fields_under",
    "known_schema",
    "payload_fields",
    "payload_shape",
]

_DATA_FILE: Final = "data/mcp_payloads.json"
_FORMAT: Final = 1
_ENVELOPE_NAMES: Final = frozenset({"params", "result"})
"""JSON-RPC members people write by habit: the payload already *is* ``params``/``result``."""
_OPEN_FIELDS: Final = frozenset({"_meta"})
_MAX_LISTED_FIELDS: Final = 12
_IDENTIFIER: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KIND_ORDER: Final = ("object", "array", "string", "number", "boolean", "null")
_KIND_PHRASE: Final = {
    "object": "an object",
    "array": "a list",
    "string": "a string",
    "number": "a number",
    "boolean": "a boolean",
    "null": "null",
}
_SHAPE_KEYWORDS: Final = frozenset(
    {"type", "properties", "additionalProperties", "items", "prefixItems", "const", "enum"}
)

Schema = Mapping[str, Any]
Steps = tuple[Step, ...]


@dataclass(frozen=True)
class PathProblem:
    """Why a path cannot match anything in the payload, and where.

    ``step_index`` indexes ``PathSyntax.steps`` so the caller can point at the
    offending step; ``help`` is a ready-to-print hint, usually a corrected path.
    """

    message: str
    step_index: int
    help: str | None = None


def known_schema(event: str, phase: str) -> bool:
    """True when paths on ``event``/``phase`` can be checked (standard events only)."""
    return _root(event, phase) is not None


def payload_fields(event: str, phase: str) -> list[str]:
    """Sorted top-level field names of the payload, for docs and completion; ``[]`` if unknown."""
    alternatives = _root(event, phase)
    if alternatives is None:
        return []
    names: set[str] = set()
    for schema in alternatives:
        names.update(schema.get("properties", {}))
    return sorted(names)


def check_path(event: str, phase: str, path: PathSyntax) -> PathProblem | None:
    """The first problem with ``path`` on this event and phase, or None.

    None also when the event has no known schema (custom events, ``*``,
    ``ns/*``): nothing can be said about their payloads.
    """
    alternatives = _root(event, phase)
    if alternatives is None:
        return None
    payload = f"{_article(event)} {event} {phase} payload"
    failure = _walk(alternatives, path.steps, _Context(payload=payload, base=None, lift=_same))
    if failure is None:
        return None
    return PathProblem(failure.message, failure.step_index, _help(alternatives, failure))


@dataclass(frozen=True)
class FieldDoc:
    """What the schemas say about one field: its type as text and its description."""

    name: str
    type: str
    description: str | None = None


def describe_path(event: str, phase: str, path: PathSyntax) -> FieldDoc | None:
    """The field a path ends at on this event and phase, for hovers; None if unknown.

    Only paths ending in a field name are described: a wildcard or index ends
    in an element, whose description is its list field's.
    """
    if not path.steps or not isinstance(path.steps[-1], Field):
        return None
    parents = _select_path(event, phase, path.steps[:-1])
    if not parents:
        return None
    name = path.steps[-1].names[-1]
    nodes = list(_property_nodes(parents, name))
    if not nodes:
        return None
    descriptions = [n["description"] for n in nodes if isinstance(n.get("description"), str)]
    types = list(dict.fromkeys(_type_text(n) for n in nodes))
    return FieldDoc(name, " | ".join(types), descriptions[0] if descriptions else None)


def fields_under(event: str, phase: str, path: PathSyntax) -> list[FieldDoc]:
    """The fields of the objects a path selects, sorted, for completion; [] if unknown or open."""
    found: dict[str, FieldDoc] = {}
    for schema in _select_path(event, phase, path.steps) or ():
        for name, node in schema.get("properties", {}).items():
            if name not in found:
                described = node.get("description")
                text = described if isinstance(described, str) else None
                found[name] = FieldDoc(name, _type_text(node), text)
    return [found[name] for name in sorted(found)]


def payload_shape(event: str, phase: str) -> list[FieldDoc]:
    """The top-level fields of an event's payload, for hovers on event names."""
    return fields_under(event, phase, PathSyntax("$", ()))


def _select_path(event: str, phase: str, steps: Steps) -> list[Schema] | None:
    """The object or list schemas a path reaches; None when unknown, open or past ``..``."""
    alts = _root(event, phase)
    if alts is None:
        return None
    current = list(alts)
    for step in steps:
        if isinstance(step, Descend):
            return None
        if isinstance(step, Field):
            sel = _Selection()
            for name in step.names:
                one = _select_field(current, name)
                sel.schemas += one.schemas
        elif isinstance(step, Index | Slice):
            sel = _select_items(current)
        else:
            sel = _select_members(current)
        if not sel.schemas:
            return None
        current = [s for schema in sel.schemas for s in _alternatives(schema)]
    return current


def _property_nodes(parents: list[Schema], name: str) -> Iterable[Schema]:
    for schema in parents:
        node = schema.get("properties", {}).get(name)
        if isinstance(node, Mapping):
            yield node


def _type_text(node: Any, depth: int = 0) -> str:
    """A schema as a short type: ``string``, ``list[TextContent | ImageContent]``, ``any``."""
    if node is True or not isinstance(node, Mapping) or depth > 4:
        return "any"
    ref = node.get("$ref")
    if isinstance(ref, str):
        return ref.rpartition("/")[2]
    parts = [*node.get("anyOf", ()), *node.get("oneOf", ()), *node.get("allOf", ())]
    if parts:
        texts = [_type_text(p, depth + 1) for p in parts]
        return " | ".join(dict.fromkeys(t for t in texts if t != "null")) or "null"
    if "const" in node:
        return json.dumps(node["const"])
    if "enum" in node:
        return " | ".join(json.dumps(v) for v in node["enum"])
    declared = node.get("type")
    if declared == "array":
        return f"list[{_type_text(node.get('items', True), depth + 1)}]"
    if declared == "integer":
        return "int"
    if isinstance(declared, str):
        return declared
    if "properties" in node or "additionalProperties" in node:
        return "object"
    return "any"


# --- data -------------------------------------------------------------------


@functools.cache
def _data() -> dict[str, Any]:
    text = resources.files("policy_engine.language").joinpath(_DATA_FILE).read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    if data.get("format") != _FORMAT:
        raise RuntimeError(
            f"{_DATA_FILE} has format {data.get('format')!r}, expected {_FORMAT}: "
            "run `python scripts/gen_mcp_schemas.py`"
        )
    return data


@functools.cache
def _root(event: str, phase: str) -> tuple[Schema, ...] | None:
    entry = _data()["events"].get(event, {}).get(phase)
    if entry is None:
        return None
    return _alternatives(entry["schema"])


_ANY: Final[Schema] = MappingProxyType({})
"""The one schema standing for "anything", so memo entries never pile up for fresh ``{}``s."""
_ALTERNATIVES: dict[int, tuple[Schema, tuple[Schema, ...]]] = {}
_KINDS: dict[int, tuple[Schema, frozenset[str]]] = {}


def _alternatives(node: Schema) -> tuple[Schema, ...]:
    """``_expand`` memoized per schema node: nodes live as long as the loaded data.

    Entries keep their node alive, so an ``id`` is never reused while cached.
    """
    hit = _ALTERNATIVES.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    result = tuple(_expand(node))
    _ALTERNATIVES[id(node)] = (node, result)
    return result


def _expand(node: Any, resolving: frozenset[str] = frozenset()) -> list[Schema]:
    """The concrete alternatives of a schema: ``$ref`` resolved, unions flattened.

    ``allOf`` is flattened like ``anyOf``: a path that fits one part is
    accepted, which errs on the side of not reporting. ``resolving`` holds the
    definitions being expanded, so a union that contains itself ends as "any".
    """
    if node is True:
        return [_ANY]
    if not isinstance(node, Mapping):
        return []
    ref = node.get("$ref")
    if isinstance(ref, str):
        if ref in resolving:
            return [_ANY]
        if not resolving:
            return list(_expand_ref(ref))
        return _expand(_definition(ref), resolving | {ref})
    parts = [*node.get("anyOf", ()), *node.get("oneOf", ()), *node.get("allOf", ())]
    if not parts:
        return [node]
    out: list[Schema] = []
    if _SHAPE_KEYWORDS.intersection(node):
        out.append({k: v for k, v in node.items() if k not in ("anyOf", "oneOf", "allOf")})
    for part in parts:
        out.extend(_expand(part, resolving))
    return out


@functools.cache
def _expand_ref(ref: str) -> tuple[Schema, ...]:
    """Definitions are shared by many paths, so each is expanded once."""
    return tuple(_expand(_definition(ref), frozenset({ref})))


def _definition(ref: str) -> Any:
    """The schema a ``#/$defs/Name`` reference names; an unknown one is treated as "any"."""
    return _data()["$defs"].get(ref.rpartition("/")[2], True)


def _kinds(schema: Schema) -> frozenset[str]:
    """``_schema_kinds`` memoized like ``_alternatives``."""
    hit = _KINDS.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    kinds = _schema_kinds(schema)
    _KINDS[id(schema)] = (schema, kinds)
    return kinds


def _schema_kinds(schema: Schema) -> frozenset[str]:
    """JSON value kinds a schema allows ("integer" folded into "number"); empty means any."""
    declared = schema.get("type")
    if isinstance(declared, str):
        kinds = {declared}
    elif isinstance(declared, list):
        kinds = set(declared)
    else:
        kinds = set()
        if "properties" in schema or "additionalProperties" in schema:
            kinds.add("object")
        if "items" in schema or "prefixItems" in schema:
            kinds.add("array")
        values = [schema["const"]] if "const" in schema else list(schema.get("enum", ()))
        kinds.update(_value_kind(value) for value in values)
    return frozenset("number" if kind == "integer" else kind for kind in kinds)


def _value_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


# --- walking ----------------------------------------------------------------


def _same(steps: Steps) -> Steps:
    return steps


@dataclass(frozen=True)
class _Context:
    """How to talk about a walk: a top-level path, or a filter's ``@`` path inside one."""

    payload: str
    base: Steps | None
    """Steps leading to ``@`` for a filter target; None for the top-level path."""
    lift: Callable[[Steps], Steps]
    """Turns a corrected version of the walked steps into a corrected whole path."""

    def place(self, steps: Steps, index: int) -> str | None:
        """The value before ``steps[index]`` in backticks; None for the payload itself."""
        if self.base is None and index == 0:
            return None
        return f"`{_render((self.base or ()) + steps[:index])}`"


@dataclass(frozen=True)
class _Fix:
    """A corrected whole path to suggest; ``verified`` ones are offered only if they check."""

    steps: Steps
    verified: bool = True


@dataclass(frozen=True)
class _Failure:
    step_index: int
    message: str
    fixes: tuple[_Fix, ...] = ()
    fields: tuple[str, ...] = ()
    """Field names that would have been valid, listed when no fix applies."""


@dataclass
class _Selection:
    """What one step selects from every alternative it was applied to."""

    schemas: list[Schema] = field(default_factory=list)
    open: bool = False
    missing_in: set[str] = field(default_factory=set)
    missing: bool = False
    kinds: set[str] = field(default_factory=set)


def _walk(alternatives: Iterable[Schema], steps: Steps, ctx: _Context) -> _Failure | None:
    alts = list(alternatives)
    for i, step in enumerate(steps):
        if isinstance(step, Descend):
            return None
        if isinstance(step, Field):
            selected: list[Schema] = []
            reached_open = False
            for name in step.names:
                sel = _select_field(alts, name)
                if not sel.open and not sel.schemas:
                    return _field_failure(steps, i, name, sel, ctx)
                selected += sel.schemas
                reached_open = reached_open or sel.open
            if reached_open:
                return None
            alts = [s for schema in selected for s in _alternatives(schema)]
        elif isinstance(step, Index | Slice):
            sel = _select_items(alts)
            if sel.open:
                return None
            if not sel.schemas:
                return _Failure(i, _mismatch(ctx.place(steps, i), ctx, sel.kinds, "a list"))
            alts = [s for schema in sel.schemas for s in _alternatives(schema)]
        else:  # Wildcard or Filter: the members of an object or the elements of a list
            sel = _select_members(alts)
            if sel.open or (not sel.schemas and sel.kinds & {"object", "array"}):
                return None  # an empty object or list: nothing below to check
            if not sel.schemas:
                expected = "a list or an object"
                return _Failure(i, _mismatch(ctx.place(steps, i), ctx, sel.kinds, expected))
            alts = [s for schema in sel.schemas for s in _alternatives(schema)]
            if isinstance(step, Filter):
                failure = _walk_filter(alts, steps, i, step, ctx)
                if failure is not None:
                    return failure
    return None


def _walk_filter(
    alts: list[Schema], steps: Steps, index: int, step: Filter, ctx: _Context
) -> _Failure | None:
    """Check ``@...`` in a filter against the elements it tests; report at the filter step."""

    def lift(target: Steps) -> Steps:
        if step.condition is None:
            fixed = Filter(target, step.op, step.value)
        else:
            # Keep the author's predicate (`like "debug_*"`); only the path is corrected.
            old, new = _render(step.target, "@"), _render(target, "@")
            text = re.sub(re.escape(old) + r"(?![\w.\[])", lambda _: new, step.text, count=1)
            fixed = Filter(target, step.op, step.value, step.condition, text)
        return ctx.lift((*steps[:index], fixed, *steps[index + 1 :]))

    base = (*(ctx.base or ()), *steps[:index], Wildcard())
    inner = _walk(alts, step.target, _Context(payload=ctx.payload, base=base, lift=lift))
    if inner is None:
        return None
    return _Failure(index, inner.message, inner.fixes, inner.fields)


def _select_field(alts: list[Schema], name: str) -> _Selection:
    sel = _Selection()
    for schema in alts:
        kinds = _kinds(schema)
        if not kinds:
            sel.open = True
            continue
        sel.kinds |= kinds
        if "object" not in kinds:
            continue
        properties: Mapping[str, Any] = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        if name in properties:
            if name in _OPEN_FIELDS:
                sel.open = True
            else:
                sel.schemas.append(properties[name])
        elif isinstance(extra, Mapping):
            sel.schemas.append(extra)
        elif extra is True or "properties" not in schema:
            sel.open = True
        else:
            sel.missing = True
            sel.missing_in.update(properties)
    return sel


def _select_items(alts: list[Schema], *, members: bool = False) -> _Selection:
    """What `[*]`/`[n]` select; with ``members``, what `*` selects (object members too)."""
    sel = _Selection()
    for schema in alts:
        kinds = _kinds(schema)
        if not kinds:
            sel.open = True
            continue
        sel.kinds |= kinds
        if "array" in kinds:
            _add_items(sel, schema)
        if members and "object" in kinds:
            extra = schema.get("additionalProperties")
            sel.schemas.extend(schema.get("properties", {}).values())
            if isinstance(extra, Mapping):
                sel.schemas.append(extra)
            elif extra is True or "properties" not in schema:
                sel.open = True
    return sel


def _select_members(alts: list[Schema]) -> _Selection:
    return _select_items(alts, members=True)


def _add_items(sel: _Selection, schema: Schema) -> None:
    prefix = schema.get("prefixItems", ())
    items = schema.get("items")
    sel.schemas.extend(prefix)
    if isinstance(items, Mapping) or items is True:
        sel.schemas.append(items if isinstance(items, Mapping) else _ANY)
    elif items is None and not prefix:
        sel.open = True


# --- messages and suggestions -----------------------------------------------


def _field_failure(steps: Steps, i: int, name: str, sel: _Selection, ctx: _Context) -> _Failure:
    step = steps[i]
    assert isinstance(step, Field)
    place = ctx.place(steps, i)
    if not sel.missing:
        fixes: tuple[_Fix, ...] = ()
        if "array" in sel.kinds:
            fixes = (_Fix(ctx.lift((*steps[:i], Wildcard(), *steps[i:]))),)
        return _Failure(i, _mismatch(place, ctx, sel.kinds, "an object"), fixes)
    message = f"no field `{name}` in {place or ctx.payload}"
    candidates = sorted(sel.missing_in)
    renamed = [
        _Fix(ctx.lift((*steps[:i], _rename(step, name, match), *steps[i + 1 :])), verified=False)
        for match in closest(name, candidates, n=3)
    ]
    dropped: list[_Fix] = []
    if i == 0 and (len(steps) > 1 or name in _ENVELOPE_NAMES):
        dropped.append(_Fix(ctx.lift(steps[1:])))
    # `$.params.name` means `$.name`, but `$.argumetns.name` means `$.arguments.name`, not `$.name`.
    ordered = dropped + renamed if name in _ENVELOPE_NAMES else renamed + dropped
    return _Failure(i, message, tuple(ordered), tuple(candidates))


def _rename(step: Field, old: str, new: str) -> Field:
    return Field(tuple(new if n == old else n for n in step.names))


def _mismatch(place: str | None, ctx: _Context, kinds: set[str], expected: str) -> str:
    shown = [k for k in _KIND_ORDER if k in kinds and (k != "null" or kinds == {"null"})]
    phrases = [_KIND_PHRASE[k] for k in shown]
    actual = phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + " or " + phrases[-1]
    return f"{place or ctx.payload} is {actual}, not {expected}"


def _help(root: tuple[Schema, ...], failure: _Failure) -> str | None:
    """A fix that makes the whole path check wins; an unverified rename is the fallback."""
    payload = "the payload"
    fixes = [fix for fix in failure.fixes if _renders(fix.steps)]
    for fix in fixes:
        if _walk(root, fix.steps, _Context(payload, None, _same)) is None:
            return f"did you mean `{_render(fix.steps)}`?"
    for fix in fixes:
        if not fix.verified:
            return f"did you mean `{_render(fix.steps)}`?"
    if failure.fields:
        listed = ", ".join(f"`{name}`" for name in failure.fields[:_MAX_LISTED_FIELDS])
        more = len(failure.fields) - _MAX_LISTED_FIELDS
        return f"known fields: {listed}" + (f" and {more} more" if more > 0 else "")
    return None


def _article(event: str) -> str:
    return "an" if event.startswith(("a", "e", "i", "o", "u", "llm/")) else "a"


# --- rendering --------------------------------------------------------------


def _render(steps: Steps, root: str = "$") -> str:
    """JSONPath text for steps, in the canonical spelling the rest of policyc prints."""
    out = [root]
    after_descend = False
    for step in steps:
        if isinstance(step, Descend):
            out.append("..")
            after_descend = True
            continue
        out.append(_render_step(step, dot=not after_descend))
        after_descend = False
    return "".join(out)


def _renders(steps: Steps) -> bool:
    """Whether every filter written with the language's predicates still names its path.

    Such a filter is rendered from its own text, so a fix that could not be
    written into that text is never offered (it would drop the predicate).
    """
    for step in steps:
        if (
            isinstance(step, Filter)
            and step.condition is not None
            and (_render(step.target, "@") not in step.text or not _renders(step.target))
        ):
            return False
    return True


def _render_step(step: Step, dot: bool) -> str:
    if isinstance(step, Field):
        if len(step.names) == 1 and _IDENTIFIER.fullmatch(step.names[0]):
            return ("." if dot else "") + step.names[0]
        return "[" + ",".join(_quote(n) for n in step.names) + "]"
    if isinstance(step, Wildcard):
        return "[*]" if dot else "*"
    if isinstance(step, Index):
        return "[" + ",".join(str(i) for i in step.indexes) + "]"
    if isinstance(step, Slice):
        bounds = ["" if b is None else str(b) for b in (step.start, step.stop)]
        if step.step is not None:
            bounds.append(str(step.step))
        return "[" + ":".join(bounds) + "]"
    if isinstance(step, Filter):
        if step.condition is not None:
            return f"[?({step.text})]"
        target = _render(step.target, root="@")
        if step.op == "exists":
            return f"[?({target})]"
        return f"[?({target} {step.op} {_literal(step.value)})]"
    return ".."


def _quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _literal(value: object) -> str:
    if isinstance(value, str):
        return _quote(value)
    return json.dumps(value)


# --- examples -----------------------------------------------------------------

_EXAMPLE_SCALARS: Final[dict[str, Any]] = {
    "string": "",
    "integer": 0,
    "number": 0,
    "boolean": False,
    "null": None,
}


def example_payload(event: str, phase: str) -> Any:
    """The smallest payload the schema admits for an event and phase (required fields only).

    ``None`` when the event has no known schema. Generated inputs (`policyc
    diff`) start from it, so a payload always has the shape a real peer sends.
    """
    entry = _data()["events"].get(event, {}).get(phase)
    if entry is None:
        return None
    return _example(entry["schema"], 0)


def _example(node: Any, depth: int) -> Any:
    if depth > 12 or not isinstance(node, Mapping):
        return None
    if "$ref" in node:
        return _example(_definition(node["$ref"]), depth + 1)
    if "const" in node:
        return node["const"]
    if node.get("enum"):
        return node["enum"][0]
    for key in ("anyOf", "oneOf"):
        if key in node:
            options = [o for o in node[key] if not _is_null_schema(o)]
            return _example(options[0] if options else node[key][0], depth + 1)
    kind = node.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in node:
        properties = node.get("properties", {})
        return {
            name: _example(properties.get(name, {}), depth + 1) for name in node.get("required", ())
        }
    if kind == "array":
        return []
    return _EXAMPLE_SCALARS.get(str(kind), None)


def _is_null_schema(node: Any) -> bool:
    return isinstance(node, Mapping) and node.get("type") == "null"

"""Generate ``policy_engine/language/data/mcp_payloads.json`` from the installed ``mcp_types``.

``policyc check`` must verify JSONPaths against MCP payload shapes without
importing the MCP SDK (about a second per process), so the shapes are exported
here ahead of time. The models come from ``mcp_types.methods``' monolith maps,
the SDK's own method -> request/result table, so the file follows the SDK
rather than a hand-kept list. Output is deterministic; ``tests/payload_schema``
regenerates it and fails when the committed file is stale.

Usage: ``python scripts/gen_mcp_schemas.py [--output PATH]``.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import itertools
import json
import sys
import textwrap
import types
from importlib.metadata import version
from pathlib import Path
from typing import Any, Union, get_args, get_origin

from mcp_types.methods import MONOLITH_REQUESTS, MONOLITH_RESULTS
from pydantic import BaseModel, TypeAdapter

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = ROOT / "policy_engine" / "language" / "data" / "mcp_payloads.json"

sys.path.insert(0, str(ROOT))
from policy_engine.wire.events import STANDARD_EVENTS  # noqa: E402

FORMAT = 1
"""Bumped when the layout of the file changes, so the loader can refuse a file it cannot read."""

KEPT_KEYWORDS = frozenset(
    {
        "$ref",
        "additionalProperties",
        "allOf",
        "anyOf",
        "const",
        "description",
        "enum",
        "items",
        "oneOf",
        "prefixItems",
        "properties",
        "required",
        "type",
    }
)
"""Schema keywords kept: shape, plus descriptions for editor hovers; titles, defaults and bounds
are dropped."""

LLM_COMPLETION: dict[str, dict[str, Any]] = {
    "request": {
        "additionalProperties": True,
        "properties": {
            "messages": {
                "items": {
                    "additionalProperties": True,
                    "properties": {"content": {}, "role": {"type": "string"}},
                    "type": "object",
                },
                "type": "array",
            },
            "model": {"type": "string"},
        },
        "type": "object",
    },
    "response": {"additionalProperties": True, "type": "object"},
}
"""The SEP's "common format" for ``llm/completion``: no MCP model exists, so it is kept open."""


def _strip(schema: Any) -> Any:
    """Keep only shape keywords, recursively; ``properties`` keys are field names, not keywords.

    A description keeps its first paragraph: enough for a hover, and the file stays small.
    """
    if isinstance(schema, list):
        return [_strip(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key not in KEPT_KEYWORDS:
            continue
        if key == "properties":
            out[key] = {name: _strip(sub) for name, sub in value.items()}
        elif key == "description":
            out[key] = " ".join(value.split("\n\n")[0].split())
        else:
            out[key] = _strip(value)
    return out


def _attribute_docs(model: type[BaseModel]) -> dict[str, str]:
    """Field docstrings (the string under an annotated attribute), by wire name, MRO included.

    ``mcp_types`` documents fields this way, which pydantic leaves out of the schema.
    """
    docs: dict[str, str] = {}
    for cls in reversed(model.__mro__):
        if not (isinstance(cls, type) and issubclass(cls, BaseModel)) or cls is BaseModel:
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
        except (OSError, TypeError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for first, second in itertools.pairwise(body):
            if (
                isinstance(first, ast.AnnAssign)
                and isinstance(first.target, ast.Name)
                and isinstance(second, ast.Expr)
                and isinstance(second.value, ast.Constant)
                and isinstance(second.value.value, str)
            ):
                docs[first.target.id] = inspect.cleandoc(second.value.value)
    out: dict[str, str] = {}
    for name, info in model.model_fields.items():
        if name in docs:
            out[info.serialization_alias or info.alias or name] = docs[name]
    return out


def _models_by_name() -> dict[str, type[BaseModel]]:
    import mcp_types

    return {
        name: value
        for name, value in vars(mcp_types).items()
        if isinstance(value, type) and issubclass(value, BaseModel)
    }


def _describe_fields(schema: dict[str, Any], model: type[BaseModel] | None) -> None:
    """Put each documented field's docstring on its property schema, in place."""
    if model is None:
        return
    properties = schema.get("properties", {})
    for wire_name, doc in _attribute_docs(model).items():
        if wire_name in properties and "description" not in properties[wire_name]:
            properties[wire_name]["description"] = doc


def _arms(annotation: Any) -> list[type[BaseModel]]:
    """The model classes of a model or union annotation, ``None`` dropped, in declared order."""
    if get_origin(annotation) in (Union, types.UnionType):
        return [arm for a in get_args(annotation) for arm in _arms(a)]
    if annotation is type(None):
        return []
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    raise TypeError(f"unexpected payload annotation {annotation!r}")


def _payload_models(event: str, phase: str) -> list[type[BaseModel]]:
    """Request payload = the request's ``params`` model; response payload = the result model(s)."""
    if phase == "request":
        request = MONOLITH_REQUESTS[event]
        return _arms(request.model_fields["params"].annotation)
    return _arms(MONOLITH_RESULTS[event])


def _merge_defs(into: dict[str, Any], defs: dict[str, Any]) -> None:
    """Share one ``$defs`` table; the same name must always mean the same schema."""
    for name, schema in defs.items():
        if into.setdefault(name, schema) != schema:
            raise ValueError(f"conflicting JSON Schema definitions for {name!r}")


def build() -> dict[str, Any]:
    """The whole data file as a JSON-ready dict."""
    mcp_version = version("mcp-types")
    source = f"mcp_types {mcp_version}"
    defs: dict[str, Any] = {}
    events: dict[str, Any] = {}
    known = _models_by_name()
    for event in STANDARD_EVENTS:
        entry: dict[str, Any] = {}
        for phase in ("request", "response"):
            if event == "llm/completion":
                entry[phase] = {"models": [], "schema": LLM_COMPLETION[phase], "source": "policyc"}
                continue
            models = _payload_models(event, phase)
            annotation: Any = models[0] if len(models) == 1 else Union[tuple(models)]  # noqa: UP007
            schema = TypeAdapter(annotation).json_schema(by_alias=True)
            raw_defs = schema.pop("$defs", {})
            for name, sub in raw_defs.items():
                _describe_fields(sub, known.get(name))
            _describe_fields(schema, models[0] if len(models) == 1 else None)
            _merge_defs(defs, {name: _strip(sub) for name, sub in raw_defs.items()})
            entry[phase] = {
                "models": [model.__name__ for model in models],
                "schema": _strip(schema),
                "source": source,
            }
        events[event] = entry
    return {
        "$defs": defs,
        "events": events,
        "format": FORMAT,
        "generator": "scripts/gen_mcp_schemas.py",
        "mcp_types_version": mcp_version,
    }


def render() -> str:
    """The file's exact text: sorted keys and fixed indentation make it byte-stable."""
    return json.dumps(build(), indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args(argv)
    output: Path = args.output
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(render(), encoding="utf-8", newline="\n")
    print(f"wrote {output} ({output.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

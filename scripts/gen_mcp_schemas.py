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
import json
import sys
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
        "enum",
        "items",
        "oneOf",
        "prefixItems",
        "properties",
        "required",
        "type",
    }
)
"""Schema keywords that describe shape; titles, descriptions, defaults and bounds are dropped."""

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
    """Keep only shape keywords, recursively; ``properties`` keys are field names, not keywords."""
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
        else:
            out[key] = _strip(value)
    return out


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
    for event in STANDARD_EVENTS:
        entry: dict[str, Any] = {}
        for phase in ("request", "response"):
            if event == "llm/completion":
                entry[phase] = {"models": [], "schema": LLM_COMPLETION[phase], "source": "policyc"}
                continue
            models = _payload_models(event, phase)
            annotation: Any = models[0] if len(models) == 1 else Union[tuple(models)]  # noqa: UP007
            schema = TypeAdapter(annotation).json_schema(by_alias=True)
            _merge_defs(defs, {name: _strip(sub) for name, sub in schema.pop("$defs", {}).items()})
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

"""Pipeline stage "describe": each resolved interceptor's SEP descriptor, as wire JSON.

Resolution has already decided every setting (hooks, mode, priorities,
params); this stage only says them in the descriptor's words.
"""

from __future__ import annotations

from typing import Any

from .model import PolicySetModel, ResolvedInterceptor, ResolvedParam

_JSON_TYPES = {"int": "integer", "number": "number", "string": "string", "bool": "boolean"}


def describe(model: PolicySetModel) -> None:
    for interceptor in model.interceptors:
        interceptor.descriptor_fields = descriptor_fields(interceptor)


def descriptor_fields(interceptor: ResolvedInterceptor) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "name": interceptor.name,
        "version": interceptor.version,
        "description": interceptor.description,
        "type": "validation" if interceptor.is_validator else "mutation",
        "hooks": [{"events": list(events), "phase": phase} for events, phase in interceptor.hooks],
        "mode": interceptor.mode,
        "failOpen": interceptor.fail_open,
        "priorityHint": priority_hint(interceptor),
        "compat": interceptor.compat,
        "configSchema": config_schema(interceptor.params) if interceptor.params else None,
    }
    return {key: value for key, value in fields.items() if value is not None}


def priority_hint(interceptor: ResolvedInterceptor) -> int | dict[str, int] | None:
    """One number when both phases agree, a per-phase object otherwise, none when unset."""
    declared = interceptor.declared_priorities
    if not declared:
        return None
    request, response = declared.get("request"), declared.get("response")
    if request == response and request is not None:
        return request
    return {phase: value for phase, value in declared.items()}


def config_schema(params: dict[str, ResolvedParam]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in params.values():
        schema: dict[str, Any] = {"type": _JSON_TYPES[param.type.base]}
        if param.type.is_list:
            schema = {"type": "array", "items": schema}
        if param.required:
            required.append(param.name)
        else:
            schema["default"] = param.default
        properties[param.name] = schema
    result: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        result["required"] = required
    return result

"""Invoke `config` checked against an interceptor's declared params.

A bad config is the caller's mistake, so it is a -32602 that names the field;
defaults fill in what the caller left out.
"""

from __future__ import annotations

from typing import Any

from ..language.model import ResolvedParam
from ..language.resolve import value_fits
from ..wire.errors import invalid_params


def resolve_config(
    interceptor: str, params: dict[str, ResolvedParam], config: dict[str, Any] | None
) -> dict[str, Any]:
    given = config or {}
    unknown = [key for key in given if key not in params]
    if unknown:
        raise invalid_params(
            f"unknown config field `{unknown[0]}`",
            interceptor=interceptor,
            field=f"config.{unknown[0]}",
            allowed=sorted(params),
        )
    resolved: dict[str, Any] = {}
    for name, param in params.items():
        if name in given:
            value = given[name]
            if not value_fits(value, param.type):
                raise invalid_params(
                    f"config field `{name}` must be a `{param.type}`",
                    interceptor=interceptor,
                    field=f"config.{name}",
                    expected=str(param.type),
                )
            resolved[name] = value
        elif param.required:
            raise invalid_params(
                f"config field `{name}` is required",
                interceptor=interceptor,
                field=f"config.{name}",
            )
        else:
            resolved[name] = param.default
    return resolved

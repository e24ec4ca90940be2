"""The chain config file: which servers to reach and how to treat their interceptors.

A JSON object (see docs/chain.md)::

    {
      "defaultTimeoutMs": 2000,
      "servers": [
        {"id": "guard", "command": "python guard.py"},
        {"id": "scan", "url": "https://scan.example/mcp", "bearerTokenEnv": "SCAN_TOKEN",
         "interceptors": {"pii-redactor": {"failOpen": true}}}
      ],
      "interceptors": {"pii-redactor": {"timeoutMs": 500, "config": {"level": "high"}}}
    }

Unknown keys are errors, so a typo cannot leave a policy silently unapplied.
Commands run in the config file's folder unless a server sets ``cwd``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.alias_generators import to_camel

from policy_engine.wire import InterceptorOverrides

from .errors import ChainConfigError
from .servers import ServerSpec
from .settings import Selector

_Millis = Annotated[int, Field(gt=0, strict=True)]


class _FileModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class _InterceptorSettings(InterceptorOverrides):
    """Override fields plus ``config``, flat in one object."""

    model_config = ConfigDict(extra="forbid")
    config: dict[str, Any] | None = None

    def overrides(self) -> InterceptorOverrides:
        fields = {key: getattr(self, key) for key in self.model_fields_set if key != "config"}
        return InterceptorOverrides(**fields)


class _Server(_FileModel):
    id: str = ""
    command: str | list[str] | None = None
    url: str | None = None
    bearer_token: str | None = None
    bearer_token_env: str | None = None
    env: dict[str, str] | None = None
    cwd: str | None = None
    interceptors: dict[str, _InterceptorSettings] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_token_source(self) -> _Server:
        if self.bearer_token is not None and self.bearer_token_env is not None:
            raise ValueError("give `bearerToken` or `bearerTokenEnv`, not both")
        return self


class _ChainFile(_FileModel):
    default_timeout_ms: _Millis | None = None
    discovery_timeout_ms: _Millis | None = None
    servers: list[_Server] = Field(default_factory=list)
    interceptors: dict[str, _InterceptorSettings] = Field(default_factory=dict)


@dataclass(frozen=True)
class ChainConfig:
    """A loaded config file, ready for :meth:`InterceptorChain.connect`."""

    servers: tuple[ServerSpec, ...] = ()
    overrides: dict[Selector, InterceptorOverrides] = field(default_factory=dict)
    configs: dict[Selector, dict[str, Any]] = field(default_factory=dict)
    default_timeout_ms: int | None = None
    discovery_timeout_ms: int | None = None


def load_chain_config(path: str | os.PathLike[str]) -> ChainConfig:
    source = Path(path)
    try:
        raw = json.loads(source.read_text(encoding="utf-8"))
    except OSError as err:
        raise ChainConfigError(f"cannot read chain config `{source}`: {err.strerror}") from None
    except json.JSONDecodeError as err:
        raise ChainConfigError(
            f"{source}:{err.lineno}:{err.colno}: chain config is not valid JSON: {err.msg}"
        ) from None
    try:
        parsed = _ChainFile.model_validate(raw)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise ChainConfigError(f"{source}: `{where}`: {first['msg']}") from None
    return _build(parsed, source.resolve().parent, source)


def _build(parsed: _ChainFile, base: Path, source: Path) -> ChainConfig:
    servers: list[ServerSpec] = []
    overrides: dict[Selector, InterceptorOverrides] = {}
    configs: dict[Selector, dict[str, Any]] = {}

    def take(selector: Selector, settings: _InterceptorSettings) -> None:
        overrides[selector] = settings.overrides()
        if settings.config is not None:
            configs[selector] = settings.config

    for name, settings in parsed.interceptors.items():
        take(name, settings)
    for index, server in enumerate(parsed.servers):
        spec = _server_spec(server, base, f"{source}: `servers.{index}`")
        if any(existing.id == spec.id for existing in servers):
            raise ChainConfigError(f"{source}: two servers share the id `{spec.id}`")
        servers.append(spec)
        for name, settings in server.interceptors.items():
            take((spec.id, name), settings)
    return ChainConfig(
        servers=tuple(servers),
        overrides=overrides,
        configs=configs,
        default_timeout_ms=parsed.default_timeout_ms,
        discovery_timeout_ms=parsed.discovery_timeout_ms,
    )


def _server_spec(server: _Server, base: Path, where: str) -> ServerSpec:
    token = server.bearer_token
    if server.bearer_token_env is not None:
        token = os.environ.get(server.bearer_token_env)
        if token is None:
            raise ChainConfigError(
                f"{where}: environment variable `{server.bearer_token_env}` is not set",
                help="export it, or give the token inline as `bearerToken`",
            )
    try:
        if (server.url is None) == (server.command is None):
            raise ChainConfigError("a server needs exactly one of `command` or `url`")
        if server.url is not None:
            return ServerSpec(url=server.url, id=server.id, bearer_token=token)
        assert server.command is not None
        cwd = str(base / server.cwd) if server.cwd is not None else str(base)
        return ServerSpec.parse(
            server.command, id=server.id, bearer_token=token, env=server.env, cwd=cwd
        )
    except ChainConfigError as err:
        raise ChainConfigError(f"{where}: {err.message}", help=err.help) from None

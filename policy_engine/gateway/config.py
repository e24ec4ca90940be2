"""The gateway's TOML config file: the command line's settings, plus per-entry ones.

Unknown keys are errors (a typo must not leave a policy unapplied), and every
error names ``file:line`` of the table or key at fault. Relative paths (policy
files, a backend's ``cwd``) are relative to the file's folder. See
docs/gateway.md for the reference.
"""

from __future__ import annotations

import os
import re
import shlex
import tomllib
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from policy_engine.chain import ServerSpec
from policy_engine.limits import MIN_KEYS, TIMEOUT_RANGE_S
from policy_engine.server.oauth import ClaimMapping, OAuthSettings, local_principal
from policy_engine.server.resource_server import metadata_url
from policy_engine.wire import InterceptorOverrides, Principal

from .backend import BackendSpec
from .serve import GatewayOptions


class ConfigError(ValueError):
    """The config file (or a flag) cannot be used; the message names file:line."""


_TOP = {
    "policies",
    "side",
    "block_style",
    "expose_interceptors",
    "chain_timeout_ms",
    "interceptor_timeout_ms",
    "decision_log",
    "record",
    "log_payloads",
    "verbose",
    "http",
    "flow",
    "limits",
    "backends",
    "interceptors",
    "overrides",
    "auth",
    "principal",
}
_HTTP = {
    "listen",
    "auth_token_env",
    "stateless",
    "allowed_hosts",
    "max_sessions",
    "max_sessions_per_client",
    "handshake_timeout_s",
}
_SESSION_LIMITS: dict[str, tuple[str, type | tuple[type, ...]]] = {
    "max_sessions": ("max_sessions", int),
    "max_sessions_per_client": ("per_client", int),
    "handshake_timeout_s": ("handshake_timeout_s", (int, float)),
}
_FLOW: dict[str, type | tuple[type, ...]] = {
    "store": str,
    "key_env": str,
    "ttl_s": (int, float),
    "max_entries": int,
    "max_sessions": int,
    "max_values": int,
}
_LIMITS: dict[str, tuple[type | tuple[type, ...], float, float]] = {
    "max_keys": (int, MIN_KEYS, float("inf")),
    "timeout_s": ((int, float), *TIMEOUT_RANGE_S),
}
_BACKEND = {
    "name",
    "command",
    "url",
    "bearer_token_env",
    "env",
    "pass_env",
    "cwd",
    "timeout_ms",
    "on_exit",
    "max_restarts",
}
_INTERCEPTOR = {"id", "command", "url", "bearer_token_env", "env", "cwd"}
_OVERRIDE = {"fail_open", "timeout_ms", "mode", "priority_hint", "config"}


def options_from_flags() -> GatewayOptions:
    return GatewayOptions()


class _Lines:
    """Finds the line of a table header or a key, for error messages."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.lines = text.splitlines()

    def table(self, name: str, index: int = 0) -> int:
        pattern = re.compile(rf"^\s*\[\[?\s*{re.escape(name)}\s*\]\]?\s*(#.*)?$")
        hits = [n for n, line in enumerate(self.lines, start=1) if pattern.match(line)]
        return hits[index] if index < len(hits) else 1

    def key(self, key: str, after: int = 1) -> int:
        pattern = re.compile(rf"^\s*{re.escape(key)}\s*=")
        for number in range(after, len(self.lines) + 1):
            if pattern.match(self.lines[number - 1]):
                return number
        return after

    def error(self, line: int, message: str) -> ConfigError:
        return ConfigError(f"{self.path}:{line}: error: {message}")


def load_config(path: Path) -> GatewayOptions:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ConfigError(f"{path}: cannot read: {err.strerror}") from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        line = getattr(err, "lineno", None) or _line_of(str(err))
        raise ConfigError(f"{path}:{line}: error: not valid TOML: {_toml_message(err)}") from None
    return _build(raw, _Lines(path, text), path.resolve().parent)


def _line_of(message: str) -> int:
    found = re.search(r"line (\d+)", message)
    return int(found.group(1)) if found else 1


def _toml_message(err: tomllib.TOMLDecodeError) -> str:
    return re.sub(r"\s*\(at line \d+, column \d+\)", "", str(err))


def _unknown(
    lines: _Lines, where: Mapping[str, Any], allowed: set[str], after: int, what: str
) -> None:
    for key in where:
        if key not in allowed:
            hint = ", ".join(sorted(allowed))
            raise lines.error(
                lines.key(key, after), f"unknown key `{key}` in {what} (known: {hint})"
            )


def _build(raw: dict[str, Any], lines: _Lines, base: Path) -> GatewayOptions:
    _unknown(lines, raw, _TOP, 1, "the top level")
    options = GatewayOptions(source=lines.path)

    def want(value: Any, kind: type | tuple[type, ...], line: int, what: str) -> Any:
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise lines.error(line, f"`{what}` has the wrong type")
        return value

    policies = want(raw.get("policies", []), list, lines.key("policies"), "policies")
    for entry in policies:
        policy = base / want(entry, str, lines.key("policies"), "policies")
        if not policy.exists():
            raise lines.error(lines.key("policies"), f"policy path `{entry}` does not exist")
        options.policies.append(policy)
    side = raw.get("side", "client")
    if side not in ("client", "server"):
        raise lines.error(lines.key("side"), '`side` must be "client" or "server"')
    options.side = side
    block = raw.get("block_style", "error")
    if block not in ("error", "result"):
        raise lines.error(lines.key("block_style"), '`block_style` must be "error" or "result"')
    options.block_style = block
    for flag in ("expose_interceptors", "log_payloads", "verbose"):
        if flag in raw:
            setattr(options, flag, want(raw[flag], bool, lines.key(flag), flag))
    for millis in ("chain_timeout_ms", "interceptor_timeout_ms"):
        if millis in raw:
            value = want(raw[millis], int, lines.key(millis), millis)
            if value <= 0:
                raise lines.error(lines.key(millis), f"`{millis}` must be positive")
            setattr(options, millis, value)
    if "decision_log" in raw:
        options.decision_log = want(raw["decision_log"], str, lines.key("decision_log"), "x")
    if "record" in raw:
        options.record = want(raw["record"], str, lines.key("record"), "x")
    _http(raw.get("http"), options, lines)
    _flow(raw.get("flow"), options, lines)
    _limits(raw.get("limits"), options, lines)
    _auth(raw.get("auth"), options, lines)
    _principal(raw.get("principal"), options, lines)
    backends = want(raw.get("backends", []), list, lines.table("backends"), "backends")
    for index, entry in enumerate(backends):
        options.backends.append(_backend(entry, lines, lines.table("backends", index), base))
    names = [b.name for b in options.backends]
    for index, name in enumerate(names):
        if name in names[:index]:
            raise lines.error(lines.table("backends", index), f"two backends are named `{name}`")
    servers = want(raw.get("interceptors", []), list, lines.table("interceptors"), "interceptors")
    for index, entry in enumerate(servers):
        options.interceptors.append(
            _interceptor_server(entry, lines, lines.table("interceptors", index), base)
        )
    for name, settings in want(raw.get("overrides", {}), dict, 1, "overrides").items():
        line = lines.table(f"overrides.{name}")
        if not isinstance(settings, dict):
            raise lines.error(line, f"`overrides.{name}` must be a table")
        _unknown(lines, settings, _OVERRIDE, line, f"[overrides.{name}]")
        params = settings.get("config")
        if params is not None:
            if not isinstance(params, dict):
                raise lines.error(lines.key("config", line), "`config` must be a table")
            options.configs[name] = params
        settings = {k: v for k, v in settings.items() if k != "config"}
        options.overrides[name] = _overrides(settings, lines, line)
    return options


def _http(section: Any, options: GatewayOptions, lines: _Lines) -> None:
    if section is None:
        return
    line = lines.table("http")
    if not isinstance(section, dict):
        raise lines.error(line, "`http` must be a table")
    _unknown(lines, section, _HTTP, line, "[http]")
    listen = section.get("listen")
    if listen is not None:
        host, sep, port = str(listen).rpartition(":")
        if not sep or not port.isdigit():
            raise lines.error(lines.key("listen", line), '`listen` wants "HOST:PORT"')
        options.listen = (host or "127.0.0.1", int(port))
    variable = section.get("auth_token_env")
    if variable is not None:
        token = os.environ.get(str(variable))
        if not token:
            raise lines.error(
                lines.key("auth_token_env", line), f"environment variable `{variable}` is not set"
            )
        options.auth_token = token
    options.stateless = bool(section.get("stateless", False))
    options.allowed_hosts = tuple(str(h) for h in section.get("allowed_hosts", []))
    limits: dict[str, Any] = {}
    for key, (field_name, kind) in _SESSION_LIMITS.items():
        if key not in section:
            continue
        value = section[key]
        typed = isinstance(value, kind) and not isinstance(value, bool)
        if not typed or value <= 0:
            raise lines.error(lines.key(key, line), f"`{key}` must be a positive number")
        limits[field_name] = value
    options.sessions = replace(options.sessions, **limits)


def _flow(section: Any, options: GatewayOptions, lines: _Lines) -> None:
    """``[flow]``: the ``--flow-*`` options; checked here, used as the CLI uses the flags."""
    if section is None:
        return
    line = lines.table("flow")
    if not isinstance(section, dict):
        raise lines.error(line, "`flow` must be a table")
    _unknown(lines, section, set(_FLOW), line, "[flow]")
    for key, value in section.items():
        kind = _FLOW[key]
        at = lines.key(key, line)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise lines.error(at, f"`{key}` has the wrong type")
        if isinstance(value, int | float) and value < 1:
            raise lines.error(at, f"`{key}` must be at least 1")
        options.flow[f"flow_{key.removesuffix('_s')}"] = value


def _limits(section: Any, options: GatewayOptions, lines: _Lines) -> None:
    """``[limits]``: the ``--limit-*`` options, checked against the flags' own ranges."""
    if section is None:
        return
    line = lines.table("limits")
    if not isinstance(section, dict):
        raise lines.error(line, "`limits` must be a table")
    _unknown(lines, section, set(_LIMITS), line, "[limits]")
    for key, value in section.items():
        kind, low, high = _LIMITS[key]
        at = lines.key(key, line)
        typed = isinstance(value, kind) and isinstance(value, int | float)
        if not typed or isinstance(value, bool):
            raise lines.error(at, f"`{key}` has the wrong type")
        if not low <= value <= high:
            bounds = f"at least {low:g}" if high == float("inf") else f"from {low:g} to {high:g}"
            raise lines.error(at, f"`{key}` must be {bounds}")
        options.limits[f"limit_{key.removesuffix('_s')}"] = value


def _command(value: Any, lines: _Lines, line: int) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(shlex.split(value))
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise lines.error(line, "`command` must be a string or a list of strings")


def _token(entry: dict[str, Any], lines: _Lines, line: int) -> str | None:
    variable = entry.get("bearer_token_env")
    if variable is None:
        return None
    token = os.environ.get(str(variable))
    if not token:
        raise lines.error(
            lines.key("bearer_token_env", line), f"environment variable `{variable}` is not set"
        )
    return token


def _backend(entry: Any, lines: _Lines, line: int, base: Path) -> BackendSpec:
    if not isinstance(entry, dict):
        raise lines.error(line, "each [[backends]] entry must be a table")
    _unknown(lines, entry, _BACKEND, line, "[[backends]]")
    fields: dict[str, Any] = {"name": entry.get("name", "")}
    if "command" in entry:
        fields["command"] = _command(entry["command"], lines, lines.key("command", line))
        fields["cwd"] = str(base / entry.get("cwd", "."))
    if "url" in entry:
        fields["url"] = entry["url"]
        fields["bearer_token"] = _token(entry, lines, line)
    if "env" in entry:
        fields["env"] = {str(k): str(v) for k, v in dict(entry["env"]).items()}
    if "pass_env" in entry:
        fields["env"] = {**fields.get("env", {}), **_passed(entry["pass_env"], lines, line)}
    if "timeout_ms" in entry:
        fields["timeout_s"] = float(entry["timeout_ms"]) / 1000
    for key in ("on_exit", "max_restarts"):
        if key in entry:
            fields[key] = entry[key]
    try:
        return BackendSpec(**fields)
    except (ValueError, TypeError) as err:
        raise lines.error(line, str(err)) from None


def _passed(names: Any, lines: _Lines, line: int) -> dict[str, str]:
    """``pass_env``: the gateway's own variables a backend gets (each must be set)."""
    at = lines.key("pass_env", line)
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise lines.error(at, "`pass_env` must be a list of variable names")
    missing = [name for name in names if name not in os.environ]
    if missing:
        raise lines.error(at, f"environment variable `{missing[0]}` is not set")
    return {name: os.environ[name] for name in names}


def _interceptor_server(entry: Any, lines: _Lines, line: int, base: Path) -> ServerSpec:
    if not isinstance(entry, dict):
        raise lines.error(line, "each [[interceptors]] entry must be a table")
    _unknown(lines, entry, _INTERCEPTOR, line, "[[interceptors]]")
    try:
        if "url" in entry:
            spec = ServerSpec(
                url=str(entry["url"]),
                id=str(entry.get("id", "")),
                bearer_token=_token(entry, lines, line),
            )
        else:
            spec = ServerSpec(
                command=_command(entry.get("command"), lines, lines.key("command", line)),
                id=str(entry.get("id", "")),
                env=entry.get("env"),
                cwd=str(base / entry.get("cwd", ".")),
            )
    except ValueError as err:
        raise lines.error(line, str(err)) from None
    return spec


def _overrides(settings: dict[str, Any], lines: _Lines, line: int) -> InterceptorOverrides:
    try:
        return InterceptorOverrides.model_validate(settings)
    except ValueError as err:
        first = str(err).splitlines()
        raise lines.error(line, f"bad override: {first[1] if len(first) > 1 else err}") from None


_AUTH = {
    "issuer",
    "resource",
    "jwks_url",
    "required_scopes",
    "id_claim",
    "roles_claim",
    "groups_claim",
    "introspection_url",
    "client_id",
    "client_secret_env",
}


def _auth(section: Any, options: GatewayOptions, lines: _Lines) -> None:
    """``[auth]``: OAuth for the HTTP front (docs/identity.md); the ``--auth-*`` flags win."""
    if section is None:
        return
    line = lines.table("auth")
    if not isinstance(section, dict):
        raise lines.error(line, "`auth` must be a table")
    _unknown(lines, section, _AUTH, line, "[auth]")
    for key, value in section.items():
        fine = isinstance(value, str) and bool(value)
        if key == "required_scopes":
            fine = isinstance(value, list) and all(isinstance(v, str) and v for v in value)
        if not fine:
            raise lines.error(lines.key(key, line), f"`{key}` has the wrong type or is empty")
    if not section.get("issuer") or not section.get("resource"):
        raise lines.error(line, "[auth] needs both `issuer` and `resource`")
    try:
        metadata_url(section["resource"])
    except ValueError as err:
        raise lines.error(lines.key("resource", line), str(err)) from None
    mapping = ClaimMapping(
        **{k: section[k] for k in ("id_claim", "roles_claim", "groups_claim") if k in section}
    )
    secret = None
    if "client_secret_env" in section:
        secret = os.environ.get(section["client_secret_env"], "").strip()
        if not secret:
            raise lines.error(
                lines.key("client_secret_env", line),
                f"environment variable `{section['client_secret_env']}` is not set",
            )
    options.oauth = OAuthSettings(
        issuer=section["issuer"],
        resource=section["resource"],
        jwks_url=section.get("jwks_url"),
        introspection_url=section.get("introspection_url"),
        client_id=section.get("client_id"),
        client_secret=secret,
        required_scopes=tuple(section.get("required_scopes", ())),
        mapping=mapping,
    )


def _principal(section: Any, options: GatewayOptions, lines: _Lines) -> None:
    """``[principal]``: who the stdio client is (``id``, ``type``, ``claims``)."""
    if section is None:
        return
    line = lines.table("principal")
    if not isinstance(section, dict):
        raise lines.error(line, "`principal` must be a table")
    _unknown(lines, section, {"id", "type", "claims"}, line, "[principal]")
    try:
        options.principal = Principal.model_validate(
            {"type": "user", "id": local_principal().id, **section}
        )
    except ValueError as err:
        first = str(err).splitlines()
        raise lines.error(line, f"bad [principal]: {first[-1].strip()}") from None

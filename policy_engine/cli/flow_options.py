"""`--flow-*` options: where session flow state lives and how much of it is kept."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

import click

from ..compiler.flows import FlowRuntime
from ..flow import Fingerprinter, FlowLimits, MemoryFlowStore
from .inputs import fail

F = TypeVar("F", bound=Callable[..., Any])
_DEFAULTS = FlowLimits()


def flow_options(command: F) -> F:
    options = [
        click.option(
            "--flow-store",
            metavar="URL",
            help="Keep flow rules' session state in Redis (redis://HOST:PORT/DB), shared by "
            "replicas. Default: in this process.",
        ),
        click.option(
            "--flow-key-env",
            metavar="VAR",
            help="Environment variable holding the fingerprint key (16+ bytes); required with "
            "--flow-store, the same on every replica. Default: a random key per process.",
        ),
        click.option(
            "--flow-ttl",
            type=click.FloatRange(1),
            default=_DEFAULTS.ttl_seconds,
            show_default=True,
            help="Seconds a remembered value is kept.",
        ),
        click.option(
            "--flow-max-entries",
            type=click.IntRange(1),
            default=_DEFAULTS.max_entries_per_session,
            show_default=True,
            help="Values remembered per session; past it none is forgotten: the session's "
            "sends carrying pattern matches are refused until the TTL.",
        ),
        click.option(
            "--flow-max-values",
            type=click.IntRange(1),
            default=_DEFAULTS.max_values,
            show_default=True,
            help="Values the in-process store keeps across all sessions (about 200 bytes "
            "each); past it, a session's new values are handled as past --flow-max-entries.",
        ),
        click.option(
            "--flow-max-sessions",
            type=click.IntRange(1),
            default=_DEFAULTS.max_sessions,
            show_default=True,
            help="Sessions kept by the in-process store; sessions holding no values make room "
            "first, and a new session is refused while all hold values.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def flow_runtime(
    flow_store: str | None,
    flow_key_env: str | None,
    flow_ttl: float,
    flow_max_entries: int,
    flow_max_sessions: int,
    flow_max_values: int = _DEFAULTS.max_values,
) -> FlowRuntime:
    """The flow state the options ask for; a usage error for a bad combination."""
    limits = FlowLimits(flow_max_entries, flow_ttl, flow_max_sessions, flow_max_values)
    key = None
    if flow_key_env:
        text = os.environ.get(flow_key_env)
        if not text:
            fail(f"--flow-key-env: environment variable `{flow_key_env}` is not set")
        if len(text.encode("utf-8")) < 16:
            fail(f"--flow-key-env: `{flow_key_env}` must hold at least 16 bytes")
        key = Fingerprinter.from_text(text)
    if flow_store is None:
        return FlowRuntime(MemoryFlowStore(limits), key)
    if key is None:
        fail("--flow-store needs --flow-key-env: every replica must fingerprint with one key")
    if not flow_store.startswith(("redis://", "rediss://", "unix://")):
        fail("--flow-store takes a redis://, rediss:// or unix:// URL")
    from ..flow import FlowStoreError
    from ..flow.redis_store import RedisFlowStore

    try:
        return FlowRuntime(RedisFlowStore(flow_store, key, limits), key)
    except FlowStoreError as exc:
        fail(str(exc))


def tool_flows(tool: str) -> FlowRuntime:
    """Flow state for one run of a local tool: messages without a session id share one
    synthetic session, so a flow rule judges the run's messages instead of denying each."""
    return FlowRuntime(synthetic_session=f"policyc-{tool}")


def echo_synthetic_note(flows: FlowRuntime) -> None:
    """Say on stderr that the run used its synthetic session, if it did."""
    note = flows.synthetic_note()
    if note is not None:
        click.echo(note, err=True)

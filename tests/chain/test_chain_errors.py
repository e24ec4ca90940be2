"""A failed chain result maps to the SEP's JSON-RPC error object."""

from __future__ import annotations

from pathlib import Path

import anyio

from policy_engine.chain import ChainEntry, InterceptorChain, chain_error
from policy_engine.compiler import compile_policies
from policy_engine.wire import ChainExecutionParams, InterceptorOverrides

from .providers import (
    ScriptedProvider,
    append,
    crash,
    deny,
    entries,
    hang,
    mutator,
    validator,
    verdict,
)

PARAMS = ChainExecutionParams(event="tools/call", phase="request", payload={"name": "echo"})


async def test_success_maps_to_no_error() -> None:
    provider = ScriptedProvider("a", mutator("m", append("m")), validator("v"))
    result = await InterceptorChain(entries(provider)).execute(PARAMS, side="sending")
    assert chain_error(result) is None


async def test_validation_failure_lists_every_blocking_verdict() -> None:
    provider = ScriptedProvider(
        "a",
        validator("schema", deny("Required field missing")),
        validator("quiet", verdict(valid=False)),
        validator("broken", crash("kaput")),
        validator("audit-only", deny("logged only"), mode="audit"),
        validator("lenient", crash(), failOpen=True),
        validator(
            "pathy",
            verdict(
                valid=False,
                severity="error",
                messages=[
                    {"path": "arguments.note", "message": "too long", "severity": "error"},
                    {"message": "just a hint", "severity": "info"},
                ],
            ),
        ),
        validator("warner", verdict(valid=False, severity="warn")),
    )
    result = await InterceptorChain(entries(provider)).execute(PARAMS, side="sending")
    error = chain_error(result)

    assert error is not None
    assert error.to_wire() == {
        "code": -32602,
        "message": "Interceptor validation failed",
        "data": {
            "validationErrors": [
                {"interceptor": "broken", "severity": "error", "message": "RuntimeError: kaput"},
                {
                    "interceptor": "pathy",
                    "severity": "error",
                    "message": "too long",
                    "path": "arguments.note",
                },
                {"interceptor": "quiet", "severity": "error", "message": "validation failed"},
                {
                    "interceptor": "schema",
                    "severity": "error",
                    "message": "Required field missing",
                },
            ]
        },
    }


async def test_mutation_failure_names_the_mutator() -> None:
    provider = ScriptedProvider("a", mutator("content-filter", crash("bad config")))
    result = await InterceptorChain(entries(provider)).execute(PARAMS, side="sending")
    error = chain_error(result)
    assert error is not None
    assert error.to_wire() == {
        "code": -32603,
        "message": "Interceptor mutation failed",
        "data": {"failedInterceptor": "content-filter", "reason": "RuntimeError: bad config"},
    }


async def test_timeout_reports_the_limit_that_expired() -> None:
    cancelled = anyio.Event()
    provider = ScriptedProvider("a", validator("slow-validator", hang(cancelled)))
    (entry,) = entries(provider)
    slow = ChainEntry(entry.interceptor, entry.host, InterceptorOverrides(timeout_ms=15))
    with anyio.fail_after(5):
        result = await InterceptorChain([slow]).execute(PARAMS, side="sending")
    error = chain_error(result)
    assert error is not None
    assert error.to_wire() == {
        "code": -32000,
        "message": "Interceptor execution timeout",
        "data": {
            "interceptor": "slow-validator",
            "timeoutMs": 15,
            "phase": "request",
            "reason": "timeout",
        },
    }


async def test_a_lone_surrogate_fails_the_chain_closed_naming_its_path() -> None:
    """The library API refuses text that is not Unicode (I-JSON) as the wire does:
    the chain blocks, and the reason names where the string is, never the string."""
    root = Path(__file__).resolve().parents[2] / "policies"
    policy_set = compile_policies([root / "tool-guard.policy", root / "secrets.policy"])
    payload = {"name": "echo", "arguments": {"t": "a\ud800"}}
    async with InterceptorChain.connect(local=[policy_set]) as chain:
        params = ChainExecutionParams.model_validate(
            {"event": "tools/call", "phase": "request", "payload": payload}
        )
        result = await chain.execute(params, side="sending")
    assert result.status == "mutation_failed"
    assert result.aborted_at is not None
    assert "not valid Unicode at `$.arguments.t`" in result.aborted_at.reason
    assert "\ud800" not in result.aborted_at.reason

"""A failed chain result maps to the SEP's JSON-RPC error object."""

from __future__ import annotations

import anyio

from policy_engine.chain import ChainEntry, InterceptorChain, chain_error
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

"""Remote results are parsed strictly: anything off-schema fails closed, naming server and field.

Each case in cases/remote_results.json is one result a real (bare SDK) server
sends back; the chain must block the message, not coerce the answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from policy_engine.chain import InterceptorChain
from policy_engine.wire import ChainExecutionParams, InterceptorError, InvokeParams

from .remote_harness import interceptor, stdio_server

pytestmark = pytest.mark.e2e

CASES = json.loads((Path(__file__).parent / "cases" / "remote_results.json").read_text())
LIMIT_S = 60


def _params() -> ChainExecutionParams:
    return ChainExecutionParams.model_validate(
        {"event": "tools/call", "phase": "request", "payload": {"name": "echo"}}
    )


@pytest.mark.parametrize("case", CASES, ids=[c["note"] for c in CASES])
async def test_off_schema_results_fail_closed(case: dict[str, Any]) -> None:
    spec = stdio_server("peer", interceptor("odd", case["type"], "raw", result=case["result"]))
    with anyio.fail_after(LIMIT_S):
        async with InterceptorChain.connect(servers=[spec]) as chain:
            result = await chain.execute(_params(), side="sending")
    assert result.status in ("validation_failed", "mutation_failed")
    assert result.final_payload is None
    assert result.aborted_at is not None and result.aborted_at.interceptor == "odd"
    reason = result.aborted_at.reason
    if "field" in case:
        assert reason.startswith("Interceptor returned an invalid result: ")
        assert f"`{case['field']}`" in reason
    else:
        assert reason == case["reason"]


async def test_the_error_names_the_server_and_the_field() -> None:
    spec = stdio_server("peer", interceptor("odd", "validation", "raw", result={"valid": "yes"}))
    with anyio.fail_after(LIMIT_S):
        async with InterceptorChain.connect(servers=[spec]) as chain:
            (entry,) = chain.entries
            with pytest.raises(InterceptorError) as raised:
                await entry.host.provider.invoke(
                    InvokeParams(name="odd", event="tools/call", phase="request", payload={})
                )
    data = raised.value.data
    assert data is not None
    assert (data["server"], data["interceptor"], data["field"]) == ("peer", "odd", "valid")


async def test_a_null_payload_left_unmodified_is_not_an_error() -> None:
    result_body = {"modified": False, "payload": None}
    spec = stdio_server("peer", interceptor("noop", "mutation", "raw", result=result_body))
    with anyio.fail_after(LIMIT_S):
        async with InterceptorChain.connect(servers=[spec]) as chain:
            result = await chain.execute(_params(), side="sending")
    assert result.status == "success"
    assert result.final_payload == {"name": "echo"}

"""A restarted server is listed again before it is invoked; drift fails closed.

A real bare SDK server reads its interceptors from a file at start-up; the test
rewrites the file, kills the server, and sends the next message. Each case in
cases/restart_drift.json is one change the chain cannot honour.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from policy_engine.chain import InterceptorChain, ServerSpec
from policy_engine.wire import ChainExecutionParams

from .remote_harness import BARE_SERVER, interceptor, kill

pytestmark = pytest.mark.e2e

CASES = json.loads((Path(__file__).parent / "cases" / "restart_drift.json").read_text())
LIMIT_S = 60


def _params() -> ChainExecutionParams:
    return ChainExecutionParams.model_validate(
        {"event": "tools/call", "phase": "request", "payload": {"name": "echo"}}
    )


def _server(specs_file: Path) -> ServerSpec:
    command = (sys.executable, str(BARE_SERVER), "--name", "peer")
    return ServerSpec(command=(*command, "--interceptors-file", str(specs_file)), id="peer")


def _write(path: Path, specs: list[dict[str, Any]]) -> None:
    path.write_text(json.dumps(specs), encoding="utf-8")


@pytest.mark.parametrize("case", CASES, ids=[c["note"] for c in CASES])
async def test_drift_after_a_restart_fails_closed(case: dict[str, Any], tmp_path: Path) -> None:
    specs_file = tmp_path / "specs.json"
    guard = interceptor("guard", "validation", "allow")
    other = interceptor("other", "validation", "allow", events=["resources/read"])
    _write(specs_file, [guard, other])
    with anyio.fail_after(LIMIT_S):
        async with InterceptorChain.connect(servers=[_server(specs_file)]) as chain:
            first = await chain.execute(_params(), side="sending")
            after = [] if case.get("remove") else [{**guard, **case.get("after", {})}]
            _write(specs_file, [*after, other, *([case["add"]] if "add" in case else [])])
            kill(first.results[0].info["pid"])
            second = await chain.execute(_params(), side="sending")
    assert first.status == "success"
    assert second.status == "validation_failed"
    assert second.final_payload is None
    assert second.aborted_at is not None
    reason = second.aborted_at.reason
    assert reason.startswith("Interceptor server changed its interceptors after reconnecting")
    if "changed" in case:
        assert f"`guard` changed {case['changed']}" in reason
    else:
        assert f"`{case['new']}`" in reason


async def test_a_restart_with_the_same_interceptors_runs_on(tmp_path: Path) -> None:
    specs_file = tmp_path / "specs.json"
    _write(specs_file, [interceptor("guard", "validation", "allow")])
    with anyio.fail_after(LIMIT_S):
        async with InterceptorChain.connect(servers=[_server(specs_file)]) as chain:
            first = await chain.execute(_params(), side="sending")
            kill(first.results[0].info["pid"])
            second = await chain.execute(_params(), side="sending")
    assert second.status == "success"
    assert second.results[0].info["pid"] != first.results[0].info["pid"]


async def test_a_change_elsewhere_does_not_block_this_message(tmp_path: Path) -> None:
    specs_file = tmp_path / "specs.json"
    guard = interceptor("guard", "validation", "allow")
    other = interceptor("other", "validation", "allow", events=["resources/read"])
    _write(specs_file, [guard, other])
    with anyio.fail_after(LIMIT_S):
        async with InterceptorChain.connect(servers=[_server(specs_file)]) as chain:
            first = await chain.execute(_params(), side="sending")
            _write(specs_file, [guard, {**other, "mode": "audit"}])
            kill(first.results[0].info["pid"])
            second = await chain.execute(_params(), side="sending")
    assert second.status == "success"

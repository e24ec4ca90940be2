"""The public SEP-2624 conformance fixtures for chains (``protocol/chain-*``).

Runs the adapter contract's ``chain`` operation over this package's executor.
The fixtures have no field for direction: they assume the invoker sends the
request and receives the response, so the side follows the phase.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from policy_engine.chain import ChainEntry, Host, InterceptorChain
from policy_engine.conformance import SUITE_DIR
from policy_engine.wire import ChainExecutionParams

from .conformance_behaviors import bind_interceptors

SUITE = SUITE_DIR
MISSING = "conformance-suite-missing"


def _chain_fixtures() -> list[str]:
    manifest = SUITE / "manifest.json"
    if not manifest.is_file():
        return [MISSING]
    listed = json.loads(manifest.read_text())["fixtures"]
    return [f["file"] for f in listed if f["id"].startswith("protocol/chain-")]


def _strip(value: Any, volatile: set[str]) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v, volatile) for k, v in value.items() if k not in volatile}
    if isinstance(value, list):
        return [_strip(v, volatile) for v in value]
    return value


def canonical(value: Any, volatile: set[str]) -> str:
    """Sorted keys, no whitespace: equal to JCS for the fixtures' ASCII, small-int data."""
    return json.dumps(
        _strip(value, volatile), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )


class ChainSession:
    """The adapter's ``createSession`` and ``chain`` operations."""

    def __init__(self, interceptors: list[dict[str, Any]]) -> None:
        provider = bind_interceptors(interceptors)
        host = Host("conformance", provider)
        self.chain = InterceptorChain([ChainEntry(d, host) for d in provider.descriptors()])

    async def chain_op(
        self, event: str, phase: str, payload: Any, session_id: str | None
    ) -> dict[str, Any]:
        params = ChainExecutionParams.model_validate(
            {
                "event": event,
                "phase": phase,
                "payload": payload,
                **({"context": {"sessionId": session_id}} if session_id is not None else {}),
            }
        )
        side = "sending" if phase == "request" else "receiving"
        result = await self.chain.execute(params, side=side)
        decision = "allow" if result.status == "success" else "deny"
        return {"decision": decision, "finalPayload": result.final_payload}


@pytest.mark.parametrize("relative", _chain_fixtures())
async def test_chain_fixture(relative: str) -> None:
    if relative == MISSING:
        pytest.fail(f"conformance suite not found at {SUITE}: the package copy is incomplete")
    fixture = json.loads((SUITE / relative).read_text())
    volatile = set(fixture["volatile"])
    session = ChainSession(fixture["interceptors"])
    for step in fixture["steps"]:
        assert step["op"] == "apply", f"{fixture['id']}: chain fixtures only hold apply steps"
        context = step["context"] or {}
        outcome = await session.chain_op(
            step["event"], step["phase"], step["payload"], context.get("sessionId")
        )
        expect = step["expect"]
        assert outcome["decision"] == expect["decision"], fixture["description"]
        text = canonical(outcome["finalPayload"], volatile)
        if "finalPayload" in expect:
            assert text == expect["finalPayloadCanonical"]
        for needle in expect.get("forbids", []):
            assert needle not in text
        for needle in expect.get("requires", []):
            assert needle in text


def test_every_chain_fixture_is_found() -> None:
    fixtures = _chain_fixtures()
    assert fixtures != [MISSING], f"conformance suite not found at {SUITE}"
    on_disk = sorted(p.name for p in (SUITE / "fixtures" / "protocol").glob("chain-*.json"))
    assert sorted(Path(f).name for f in fixtures) == on_disk and len(on_disk) == 7

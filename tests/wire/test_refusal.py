"""`Refusal`: one refused message, and every wire form a host answers it with.

The gateway, the in-code client wrapper and the server middlewares all answer with
these forms, so each field is pinned here once: the error object, its data (a copy,
never the payload), the ``isError`` tool result and the flag that tells a policy's
block from a host that could not decide.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from policy_engine.chain import InterceptorChain
from policy_engine.compiler import compile_policies
from policy_engine.interception import Interception, InterceptionSession, Refuse
from policy_engine.wire import (
    AbortedAt,
    ChainExecutionResult,
    ChainResultEntry,
    InterceptorError,
    Refusal,
    ValidationSummary,
)
from policy_engine.wire.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    TIMEOUT,
    VALIDATION_FAILED,
    timed_out,
    validation_error_item,
)
from policy_engine.wire.refusal import BLOCKED_META_KEY

ITEM = validation_error_item("guard", "error", "shell commands are not allowed", "name")


def test_by_policy_is_the_seps_validation_error() -> None:
    refusal = Refusal.by_policy([ITEM])
    assert (refusal.code, refusal.message) == (INVALID_PARAMS, VALIDATION_FAILED)
    assert refusal.blocked_by_policy is True
    assert refusal.to_error_data() == {"validationErrors": [ITEM]}
    assert refusal.to_error() == {
        "code": INVALID_PARAMS,
        "message": VALIDATION_FAILED,
        "data": {"validationErrors": [ITEM]},
    }


def test_an_error_without_data_has_no_data_field() -> None:
    refusal = Refusal(INTERNAL_ERROR, "Interceptor chain failed", None, blocked_by_policy=False)
    assert refusal.to_error_data() is None
    assert refusal.to_error() == {"code": INTERNAL_ERROR, "message": "Interceptor chain failed"}
    assert refusal.to_exception().to_wire() == refusal.to_error()


def test_of_keeps_the_error_and_takes_the_flag() -> None:
    error = timed_out("slow", 250, "request")
    refusal = Refusal.of(error, blocked_by_policy=False)
    assert refusal.blocked_by_policy is False
    assert refusal.to_error() == error.to_wire()
    assert refusal.to_error()["code"] == TIMEOUT
    exception = refusal.to_exception()
    assert isinstance(exception, InterceptorError)
    assert (exception.code, exception.message, exception.data) == (
        error.code,
        error.message,
        error.data,
    )


def test_the_wire_forms_are_copies() -> None:
    """A host that adds to what it sends (a retry hint, a field of its own) must not
    change the refusal the next host reads."""
    refusal = Refusal.by_policy([ITEM])
    refusal.to_error()["data"]["validationErrors"].append("x")
    data = refusal.to_error_data()
    assert data is not None
    data["extra"] = 1
    refusal.to_result()["_meta"][BLOCKED_META_KEY]["validationErrors"].clear()
    assert refusal.to_error_data() == {"validationErrors": [ITEM]}


def test_to_result_is_an_is_error_tool_result_with_the_error_in_meta() -> None:
    second = validation_error_item("guard", "error", "and not on Sundays")
    refusal = Refusal.by_policy([ITEM, second])
    assert refusal.to_result() == {
        "content": [
            {
                "type": "text",
                "text": "Blocked by policy: shell commands are not allowed; and not on Sundays",
            }
        ],
        "isError": True,
        "_meta": {
            BLOCKED_META_KEY: {
                "code": INVALID_PARAMS,
                "message": VALIDATION_FAILED,
                "validationErrors": [ITEM, second],
            }
        },
    }
    json.dumps(refusal.to_result())  # wire-ready as it is


def test_a_result_without_verdicts_reads_the_message() -> None:
    refusal = Refusal.of(timed_out("slow", 250, "request"), blocked_by_policy=False)
    result = refusal.to_result()
    assert result["content"] == [
        {"type": "text", "text": "Blocked by policy: Interceptor execution timeout"}
    ]
    assert result["_meta"][BLOCKED_META_KEY]["timeoutMs"] == 250


POLICY = """
validator no-email {
  on tools/call request
  deny if exists $..email "an email address crossed"
}
"""
SECRET = "ann.secret@example.com"


@pytest.mark.parametrize("style", ["error", "result"])
async def test_a_refusal_never_echoes_the_payload(tmp_path: Path, style: str) -> None:
    source = tmp_path / "p.policy"
    source.write_text(POLICY)
    async with InterceptorChain.connect(local=[compile_policies([source])]) as chain:
        core = Interception(chain, block_style=style)  # type: ignore[arg-type]
        outcome = await InterceptionSession(core).client_request(
            "tools/call", {"name": "send", "arguments": {"email": SECRET, "note": SECRET}}
        )
    assert isinstance(outcome, Refuse)
    refusal = outcome.refusal
    assert refusal.blocked_by_policy is True
    assert outcome.as_result is (style == "result")
    for form in (refusal.to_error(), refusal.to_error_data(), refusal.to_result()):
        assert SECRET not in json.dumps(form)
        assert "ann.secret" not in json.dumps(form)


def _failed(status: str, aborted: AbortedAt, crashed: bool = False) -> ChainExecutionResult:
    entry = ChainResultEntry(
        interceptor=aborted.interceptor,
        type="validation",
        phase="request",
        severity="error",
        error="RuntimeError" if crashed else None,
        valid=None if crashed else False,
    )
    return ChainExecutionResult(
        status=status,  # type: ignore[arg-type]
        event="tools/call",
        phase="request",
        results=[entry],
        validation_summary=ValidationSummary(),
        total_duration_ms=1.0,
        aborted_at=aborted,
    )


@pytest.mark.parametrize(
    ("status", "aborted", "crashed", "blocked"),
    [
        ("validation_failed", AbortedAt(interceptor="g", reason="no", type="validation"), 0, 1),
        ("validation_failed", AbortedAt(interceptor="g", reason="boom", type="validation"), 1, 0),
        ("timeout", AbortedAt(interceptor="g", reason="slow", type="timeout", timeout_ms=5), 0, 0),
        ("mutation_failed", AbortedAt(interceptor="m", reason="boom", type="mutation"), 0, 0),
    ],
)
async def test_only_a_validators_verdict_is_blocked_by_policy(
    tmp_path: Path, status: str, aborted: AbortedAt, crashed: int, blocked: int
) -> None:
    """A timeout, a failed mutation or a validator that crashed (failing closed) is the
    host's failure to decide, not a block: a gateway merging lists leaves that backend
    out instead of refusing the whole list."""
    source = tmp_path / "p.policy"
    source.write_text(POLICY)
    async with InterceptorChain.connect(local=[compile_policies([source])]) as chain:
        refuse = Interception(chain).refusal("tools/call", _failed(status, aborted, bool(crashed)))
    assert refuse.refusal.blocked_by_policy is bool(blocked)
    assert refuse.run is not None and refuse.run.status == status

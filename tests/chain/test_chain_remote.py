"""The chain over real interceptor server processes (the bare SDK server).

Servers are started as stdio subprocesses or on 127.0.0.1 over streamable
HTTP; every wait is bounded by ``fail_after``.
"""

from __future__ import annotations

import socket
import sys
from typing import Any

import anyio
import pytest

from policy_engine.chain import (
    ChainEntry,
    DiscoveryError,
    InterceptorChain,
    RemoteProvider,
    ServerSpec,
)
from policy_engine.wire import (
    ChainExecutionParams,
    InterceptorError,
    InterceptorOverrides,
    InvokeParams,
)

from .providers import ScriptedProvider, append, mutator, validator
from .remote_harness import http_server, interceptor, kill, stdio_server

pytestmark = pytest.mark.e2e

LIMIT_S = 60


def params(phase: str = "request", event: str = "tools/call", **extra: Any) -> ChainExecutionParams:
    payload = {"name": "echo", "trail": []}
    return ChainExecutionParams.model_validate(
        {"event": event, "phase": phase, "payload": payload, **extra}
    )


def by_name(result: Any) -> dict[str, Any]:
    return {r.interceptor: r for r in result.results}


async def test_three_servers_run_as_one_globally_ordered_chain() -> None:
    s1 = stdio_server(
        "s1",
        interceptor("redact", "mutation", "append", tag="s1:redact", priorityHint=-100),
        interceptor("stamp", "mutation", "append", tag="s1:stamp", priorityHint=50),
        interceptor("audit-tag", "mutation", "append", tag="s1:audit", mode="audit"),
    )
    s2 = stdio_server(
        "s2",
        interceptor("normalize", "mutation", "append", tag="s2:normalize"),
        interceptor("stamp", "mutation", "append", tag="s2:stamp", priorityHint=50),
        interceptor("record", "validation", "record"),
    )
    s3 = stdio_server(
        "s3",
        interceptor("early", "mutation", "append", tag="s3:early", priorityHint=-500),
        interceptor("audit-deny", "validation", "deny", mode="audit"),
        minimal=True,
    )
    local = ScriptedProvider("local", mutator("stamp", append("local:stamp"), priorityHint=50))
    with anyio.fail_after(LIMIT_S):
        async with InterceptorChain.connect(
            local=[local], servers=[s1, s2, s3], configs={"record": {"verbose": True}}
        ) as chain:
            context = {"sessionId": "abc"}
            result = await chain.execute(params(context=context), side="sending")
            again = await chain.execute(params("response"), side="receiving")

    # one global sort over four hosts; the three `stamp`s tie and keep host order
    order = ["s3:early", "s1:redact", "s2:normalize", "local:stamp", "s1:stamp", "s2:stamp"]
    assert result.status == "success"
    assert result.final_payload == {"name": "echo", "trail": order}
    ran = [(r.interceptor, (r.info or {}).get("server")) for r in result.results]
    assert ran == [
        ("early", "s3"),
        ("redact", "s1"),
        ("audit-tag", "s1"),
        ("normalize", "s2"),
        ("stamp", None),
        ("stamp", "s1"),
        ("stamp", "s2"),
        ("audit-deny", "s3"),
        ("record", "s2"),
    ]
    entries = by_name(result)
    assert entries["audit-tag"].mode == "audit"
    assert entries["audit-tag"].payload["trail"] == ["s3:early", "s1:redact", "s1:audit"]
    assert entries["audit-deny"].valid is False and entries["audit-deny"].mode == "audit"
    seen = entries["record"].info["seen"]
    assert seen == {
        "trail": order,
        "config": {"verbose": True},
        "context": context,
        "timeoutMs": None,
    }
    assert result.validation_summary.errors == 1

    # receiving the response: validators see the raw payload, then mutators run
    assert again.status == "success"
    assert by_name(again)["record"].info["seen"]["trail"] == []
    assert [r.interceptor for r in again.results][:2] == ["audit-deny", "record"]
    # one session per server, reused across executions
    pids = {(r.info or {}).get("server"): (r.info or {}).get("pid") for r in result.results}
    assert all(
        pids[(r.info or {}).get("server")] == (r.info or {}).get("pid") for r in again.results
    )


def with_overrides(chain: InterceptorChain, **fields: Any) -> InterceptorChain:
    """The same entries (and sessions) under different overrides."""
    overrides = InterceptorOverrides(**fields)
    return InterceptorChain([ChainEntry(e.interceptor, e.host, overrides) for e in chain.entries])


async def test_remote_errors_keep_their_code_and_data_and_obey_fail_open() -> None:
    spec = stdio_server(
        "s1",
        interceptor("boom", "validation", "error"),
        interceptor("ok", "validation", "allow", events=["custom/ok"]),
        minimal=True,
    )
    with anyio.fail_after(LIMIT_S):
        async with InterceptorChain.connect(servers=[spec]) as chain:
            provider = chain.entries[0].host.provider
            assert isinstance(provider, RemoteProvider)
            ok = await provider.invoke(
                InvokeParams(name="ok", event="custom/ok", phase="response", payload=None)
            )
            with pytest.raises(InterceptorError) as caught:
                await provider.invoke(
                    InvokeParams(name="boom", event="tools/call", phase="request", payload={})
                )
            with pytest.raises(InterceptorError) as unknown:
                await provider.invoke(
                    InvokeParams(name="nope", event="tools/call", phase="request", payload={})
                )
            closed = await chain.execute(params(), side="sending")
            opened = await with_overrides(chain, fail_open=True).execute(params(), side="sending")

    # the server sent neither the shared fields nor anything but the envelope
    assert {k: v for k, v in ok.to_wire().items() if k != "info"} == {
        "interceptor": "ok",
        "type": "validation",
        "phase": "response",
        "valid": True,
    }
    assert caught.value.to_wire() == {
        "code": -32603,
        "message": "Interceptor execution failed",
        "data": {"interceptor": "boom", "reason": "deliberate failure"},
    }
    assert (unknown.value.code, unknown.value.data) == (-32602, {"interceptor": "nope"})
    assert closed.status == "validation_failed"
    assert closed.aborted_at is not None
    assert closed.aborted_at.reason == "Interceptor execution failed: deliberate failure"
    assert opened.status == "success" and opened.validation_summary.warnings == 1


async def test_killed_or_crashed_stdio_servers_are_restarted_by_the_next_call() -> None:
    spec = stdio_server(
        "s1",
        interceptor("ok", "validation", "allow"),
        interceptor("die", "validation", "exit"),
    )
    only_ok, only_die = params(interceptors=["ok"]), params(interceptors=["die"])
    with anyio.fail_after(LIMIT_S):
        async with InterceptorChain.connect(servers=[spec]) as chain:
            first = await chain.execute(only_ok, side="sending")
            kill(first.results[0].info["pid"])
            restarted = await chain.execute(only_ok, side="sending")
            again = await chain.execute(only_ok, side="sending")
            # the process exits mid-call; the one retry meets the same fate
            crashed = await chain.execute(only_die, side="sending")
            recovered = await chain.execute(only_ok, side="sending")

    pid = [r.results[0].info["pid"] for r in (first, restarted, again, recovered)]
    assert first.status == restarted.status == again.status == recovered.status == "success"
    assert pid[0] != pid[1] == pid[2] != pid[3]
    assert crashed.status == "validation_failed"
    assert crashed.aborted_at is not None
    assert crashed.aborted_at.reason.startswith("Interceptor server connection lost")


async def test_http_server_with_bearer_token_survives_a_restart() -> None:
    with anyio.fail_after(LIMIT_S):
        async with http_server("h1", interceptor("ok", "validation", "allow")) as server:
            spec = ServerSpec(url=server.url, bearer_token="t0ken")
            async with InterceptorChain.connect(servers=[spec]) as chain:
                first = await chain.execute(params(), side="sending")
                await server.stop()
                down = await chain.execute(params(), side="sending")
                await server.start()
                back = await chain.execute(params(), side="sending")

    assert first.status == "success"
    assert first.results[0].info["authorization"] == "Bearer t0ken"
    assert down.status == "validation_failed"
    assert down.aborted_at is not None and "Interceptor server" in down.aborted_at.reason
    assert back.status == "success"
    assert back.results[0].info["pid"] != first.results[0].info["pid"]


async def test_timeouts_cancel_a_slow_remote_validator() -> None:
    spec = stdio_server(
        "s1",
        interceptor("slow", "validation", "slow"),
        interceptor("ok", "validation", "allow"),
        interceptor("probe", "validation", "cancel-probe", events=["custom/probe"]),
    )
    with anyio.fail_after(LIMIT_S):
        async with InterceptorChain.connect(servers=[spec]) as chain:
            whole = await chain.execute(params(timeoutMs=500), side="sending")
            probe = await chain.execute(params(event="custom/probe"), side="sending")
            single = await with_overrides(chain, timeout_ms=300).execute(params(), side="sending")

    assert whole.status == "timeout"
    assert whole.aborted_at is not None
    assert (whole.aborted_at.interceptor, whole.aborted_at.timeout_ms) == ("slow", 500)
    assert by_name(whole)["ok"].valid is True
    assert by_name(whole)["slow"].error == "cancelled: chain timeout after 500 ms"
    # the server saw its handler cancelled: the chain did not leave it running
    assert probe.results[0].info["cancelled"] == 1
    assert single.status == "timeout"
    assert single.aborted_at is not None and single.aborted_at.timeout_ms == 300
    assert by_name(single)["slow"].error == "timed out after 300 ms"


async def test_discovery_fails_closed_naming_the_broken_server() -> None:
    good = ScriptedProvider("good", validator("ok"))
    broken = ServerSpec(command=(sys.executable, "-c", "import sys; sys.exit(2)"), id="broken")
    with anyio.fail_after(LIMIT_S), pytest.raises(DiscoveryError) as caught:
        async with InterceptorChain.connect(local=[good], servers=[broken]):
            pass
    assert list(caught.value.failures) == ["broken"]
    assert str(caught.value).startswith("interceptor discovery failed on `broken`: ")


async def test_discovery_fails_on_an_unreachable_url() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/mcp"
    with anyio.fail_after(LIMIT_S), pytest.raises(DiscoveryError) as caught:
        async with InterceptorChain.connect(servers=[url]):
            pass
    assert list(caught.value.failures) == [url]
    assert "Interceptor server unreachable" in caught.value.failures[url]


async def test_a_lone_surrogate_from_the_caller_never_costs_the_server_its_connection() -> None:
    """A payload that cannot be written (not Unicode text) is the caller's fault: that
    invoke fails with -32602 naming where, the server's connection and pid stay."""
    server = stdio_server("s1", interceptor("record", "validation", "record"))
    hostile = ChainExecutionParams.model_validate(
        {"event": "tools/call", "phase": "request", "payload": {"name": "x\ud800", "trail": []}}
    )
    with anyio.fail_after(LIMIT_S):
        async with InterceptorChain.connect(servers=[server]) as chain:
            before = await chain.execute(params(), side="sending")
            refused = await chain.execute(hostile, side="sending")
            after = await chain.execute(params(), side="sending")
    assert refused.status != "success"
    failed = by_name(refused)["record"]
    assert failed.error is not None and "not valid Unicode" in failed.error
    assert "\ud800" not in failed.error
    assert before.status == after.status == "success"
    pid = by_name(before)["record"].info["pid"]
    assert by_name(after)["record"].info["pid"] == pid

"""Every remote wait has a deadline, and a deadline is kept even by a server that ignores us.

The margins are generous (a second): what is tested is that the deadline, not
the SDK's polite two-second shutdown grace, decides when the caller gets its answer.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest

from policy_engine.chain import DiscoveryError, InterceptorChain, RemoteProvider, ServerSpec
from policy_engine.chain.remote import DEFAULT_REMOTE_TIMEOUT_MS
from policy_engine.wire import InterceptorError, InvokeParams
from policy_engine.wire.errors import TIMEOUT

from .remote_harness import interceptor, stdio_server

pytestmark = pytest.mark.e2e

MARGIN_S = 1.0
# Writes its pid, then ignores stdin and never answers.
DEAF = "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(60)"
# Answers every line with garbage.
GARBAGE = "import sys\nfor line in sys.stdin:\n    print('not json', flush=True)"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_a_deaf_stdio_server_does_not_overrun_the_discovery_deadline(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    spec = ServerSpec(command=(sys.executable, "-c", DEAF, str(pid_file)), id="deaf")
    with anyio.fail_after(1.0 + MARGIN_S), pytest.raises(DiscoveryError) as caught:
        async with InterceptorChain.connect(servers=[spec], discovery_timeout_ms=1000):
            pass
    assert caught.value.failures == {"deaf": "no answer within 1000 ms"}
    # the abandoned server was killed, not left running
    assert not _alive(int(pid_file.read_text()))


async def test_sleep_as_a_server_keeps_the_deadline() -> None:
    with anyio.fail_after(1.0 + MARGIN_S), pytest.raises(DiscoveryError):
        async with InterceptorChain.connect(servers=["sleep 20"], discovery_timeout_ms=1000):
            pass


async def test_a_server_answering_garbage_is_bounded_by_the_deadline() -> None:
    spec = ServerSpec(command=(sys.executable, "-c", GARBAGE), id="garbage")
    with anyio.fail_after(0.5 + MARGIN_S), pytest.raises(DiscoveryError):
        async with InterceptorChain.connect(servers=[spec], discovery_timeout_ms=500):
            pass


async def test_an_invoke_without_timeout_gets_the_default_deadline() -> None:
    spec = stdio_server("s1", interceptor("slow", "validation", "slow"))
    params = InvokeParams(name="slow", event="tools/call", phase="request", payload={})
    with anyio.fail_after(30):
        async with RemoteProvider(spec, default_timeout_ms=500) as remote:
            await remote.discover()
            with anyio.fail_after(0.5 + MARGIN_S), pytest.raises(InterceptorError) as raised:
                await remote.invoke(params)
    assert raised.value.code == TIMEOUT
    assert raised.value.data is not None and raised.value.data["timeoutMs"] == 500


def test_the_default_deadline_is_finite() -> None:
    assert RemoteProvider(stdio_server("s1")).default_timeout_ms == DEFAULT_REMOTE_TIMEOUT_MS
    assert 0 < DEFAULT_REMOTE_TIMEOUT_MS <= 60_000


async def test_an_in_process_chain_that_overruns_its_deadline_answers_timeout() -> None:
    """In-process evaluation never yields to the deadline; the answer still says timeout."""
    from policy_engine.compiler import compile_sources
    from policy_engine.wire import ChainExecutionParams

    source = (
        'mutator scrub "Scrub" {\n  on tools/call request\n'
        "  redact $.arguments matching EMAIL\n}\n"
        'validator guard "Guard" {\n  on tools/call request\n'
        '  deny if $.arguments.q matches /never-there/ "no" code never\n}\n'
    )
    text = " ".join(f"user{i}@example.com" for i in range(5000))  # well under the thread threshold
    policy = compile_sources({"p.policy": source})
    async with InterceptorChain.connect(local={"p": policy}) as chain:
        params = ChainExecutionParams(
            event="tools/call",
            phase="request",
            payload={"name": "search", "arguments": {"q": text}},
            timeout_ms=1,
        )
        result = await chain.execute(params, side="sending")
    assert result.status == "timeout"
    assert result.final_payload is None
    assert result.aborted_at is not None and result.aborted_at.type == "timeout"

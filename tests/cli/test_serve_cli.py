"""`policyc serve` end to end: real server processes, the MCP SDK client.

stdio and streamable HTTP, bearer-token auth, and hot reload that keeps the
last good policy set when an edit does not compile.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from anyio.abc import Process

from policy_engine.chain import DiscoveryError, RemoteProvider, ServerSpec
from policy_engine.wire import InterceptorError, InvokeParams, MutationResult, ValidationResult

pytestmark = pytest.mark.e2e

SERVE = (sys.executable, "-m", "policy_engine.cli.main", "serve")
SHELL = {"name": "shell_exec", "arguments": {}}
# The legacy (2025-11-25) handshake as raw JSON-RPC messages, for raw-wire tests.
HANDSHAKE = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]


def _invoke(name: str, payload: object, **extra: object) -> InvokeParams:
    return InvokeParams.model_validate(
        {"name": name, "event": "tools/call", "phase": "request", "payload": payload, **extra}
    )


async def test_stdio_lists_invokes_and_maps_errors(policies: Path) -> None:
    with anyio.fail_after(60):
        async with RemoteProvider(ServerSpec(command=(*SERVE, str(policies)))) as server:
            names = [d.name for d in await server.discover()]
            assert names == [
                "argument-guard",
                "audit-logger",
                "elicitation-guard",
                "pii-redactor",
                "prompt-injection",
                "resource-guard",
                "sampling-guard",
                "secret-redactor",
                "tool-filter",
                "tool-guard",
                "admin-only-tools",
            ]
            blocked = await server.invoke(_invoke("tool-guard", SHELL))
            assert isinstance(blocked, ValidationResult)
            assert (blocked.valid, blocked.severity) == (False, "error")
            redacted = await server.invoke(
                _invoke("pii-redactor", {"name": "x", "arguments": {"email": "a@b.co"}})
            )
            assert isinstance(redacted, MutationResult)
            assert redacted.payload == {"name": "x", "arguments": {"email": "[EMAIL]"}}

            with pytest.raises(InterceptorError) as unknown:
                await server.invoke(_invoke("no-such", SHELL))
            assert unknown.value.code == -32602
            assert unknown.value.data is not None
            assert unknown.value.data["interceptor"] == "no-such"

            with pytest.raises(InterceptorError) as not_hooked:
                await server.invoke(
                    InvokeParams(
                        name="tool-guard", event="tools/call", phase="response", payload={}
                    )
                )
            assert not_hooked.value.code == -32602

            with pytest.raises(InterceptorError) as bad_config:
                await server.invoke(
                    InvokeParams(
                        name="sampling-guard",
                        event="sampling/createMessage",
                        phase="request",
                        payload={"messages": [], "maxTokens": 1},
                        config={"maxTokens": "lots"},
                    )
                )
            assert bad_config.value.code == -32602
            assert bad_config.value.data is not None
            assert bad_config.value.data["field"] == "config.maxTokens"


@asynccontextmanager
async def _http_server(args: list[str], env: dict[str, str]) -> AsyncIterator[tuple[Process, str]]:
    process = await anyio.open_process([*SERVE, *args], env={**os.environ, **env})
    try:
        assert process.stderr is not None
        seen = b""
        with anyio.fail_after(60):
            while b"serving on " not in seen:
                seen += await process.stderr.receive()
        match = re.search(rb"serving on (http://\S+/mcp)", seen)
        assert match is not None
        yield process, match.group(1).decode()
    finally:
        process.terminate()
        with anyio.move_on_after(10):
            await process.wait()


async def test_http_with_bearer_token(policies: Path) -> None:
    token_env = {"POLICYC_TEST_TOKEN": "s3cret-token"}
    args = [str(policies), "--http", "127.0.0.1:0", "--auth-token-env", "POLICYC_TEST_TOKEN"]
    async with _http_server(args, token_env) as (_, url):
        with anyio.fail_after(60):
            spec = ServerSpec(url=url, bearer_token="s3cret-token")
            async with RemoteProvider(spec) as server:
                assert len(await server.discover()) == 11
                result = await server.invoke(_invoke("tool-guard", SHELL))
                assert isinstance(result, ValidationResult) and not result.valid
            for wrong in (None, "wrong-token"):
                with pytest.raises(
                    (DiscoveryError, InterceptorError, OSError, Exception)
                ) as refused:
                    async with RemoteProvider(ServerSpec(url=url, bearer_token=wrong)) as server:
                        await server.discover()
                assert "401" in repr(refused.value) or "nauthor" in repr(refused.value)


async def test_watch_keeps_the_last_good_set(tmp_path: Path) -> None:
    policy = tmp_path / "guard.policy"
    policy.write_text('validator guard {\n  on tools/call request\n  deny tools ["rm"]\n}\n')
    log = tmp_path / "server.log"
    with anyio.fail_after(90), log.open("w") as errlog:
        spec = ServerSpec(command=(*SERVE, str(tmp_path), "--watch"))
        async with RemoteProvider(spec, errlog=errlog) as server:
            assert [d.name for d in await server.discover()] == ["guard"]

            policy.write_text("validator guard {\n  on tools/call request\n  deny if\n}\n")
            while "reload failed" not in log.read_text():
                await anyio.sleep(0.1)
            assert [d.name for d in await server.discover()] == ["guard"]
            still = await server.invoke(_invoke("guard", {"name": "rm"}))
            assert isinstance(still, ValidationResult) and not still.valid

            policy.write_text(
                'validator guard {\n  on tools/call request\n  deny tools ["rm", "mv"]\n}\n'
                "mutator tidy {\n  on tools/call request\n  remove $.arguments.debug\n}\n"
            )
            while "reloaded 2 interceptors" not in log.read_text():
                await anyio.sleep(0.1)
            assert [d.name for d in await server.discover()] == ["guard", "tidy"]
            moved = await server.invoke(_invoke("guard", {"name": "mv"}))
            assert isinstance(moved, ValidationResult) and not moved.valid


async def test_no_result_type_on_the_wire(policies: Path) -> None:
    """Raw JSON lines: the invoke result is exactly the SEP object, nothing added."""
    lines = [
        *HANDSHAKE,
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "interceptor/invoke",
            "params": {
                "name": "tool-guard",
                "event": "tools/call",
                "phase": "request",
                "payload": {"name": "ls"},
            },
        },
    ]
    import json

    process = await anyio.open_process([*SERVE, str(policies)])
    try:
        assert process.stdin is not None and process.stdout is not None
        await process.stdin.send(b"".join(json.dumps(m).encode() + b"\n" for m in lines))
        buffer = b""
        answers: dict[int, dict[str, object]] = {}
        with anyio.fail_after(60):
            while 2 not in answers:
                buffer += await process.stdout.receive()
                *complete, buffer = buffer.split(b"\n")
                for line in complete:
                    message = json.loads(line)
                    answers[message["id"]] = message
        assert answers[2]["result"] == {
            "interceptor": "tool-guard",
            "type": "validation",
            "phase": "request",
            "durationMs": answers[2]["result"]["durationMs"],  # type: ignore[index]
            "valid": True,
        }
    finally:
        process.terminate()
        with anyio.move_on_after(10):
            await process.wait()


async def test_requests_in_flight_at_end_of_input_are_still_answered(policies: Path) -> None:
    """A client may write its last request and close stdin at once: the reply
    must still come before the server exits."""
    import json

    messages = [
        *HANDSHAKE,
        {"jsonrpc": "2.0", "id": 2, "method": "interceptors/list", "params": {}},
        *(
            {
                "jsonrpc": "2.0",
                "id": i,
                "method": "interceptor/invoke",
                "params": {
                    "name": "tool-guard",
                    "event": "tools/call",
                    "phase": "request",
                    "payload": {"name": "shell_exec" if i % 2 else "ls"},
                },
            }
            for i in range(3, 23)
        ),
    ]
    data = b"".join(json.dumps(m).encode() + b"\n" for m in messages) + b"not json\n"
    with anyio.fail_after(60):
        done = await anyio.run_process([*SERVE, str(policies)], input=data, check=False)
    assert done.returncode == 0
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    by_id = {r["id"]: r for r in replies}
    assert sorted(i for i in by_id if i is not None) == list(range(1, 23))
    assert by_id[None]["error"]["code"] == -32700
    for i in range(3, 23):
        assert by_id[i]["result"]["valid"] is (i % 2 == 0)

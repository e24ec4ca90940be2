"""The README's demo: serve the shipped policies and talk to them as a client.

It starts `policyc serve policies/` as a real stdio MCP server, connects with
the official SDK client, lists the interceptors, invokes one that blocks and
one that redacts, then runs the SEP chain over the server for one message.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio

from .chain import InterceptorChain, RemoteProvider, ServerSpec, side_for
from .language.pipeline import check_paths
from .wire import ChainExecutionParams, InvokeParams, MutationResult, ValidationResult

POLICIES = Path(__file__).resolve().parents[1] / "policies"

BLOCKED_CALL = {"name": "shell_exec", "arguments": {"cmd": "rm -rf /"}}
PERSONAL_CALL = {
    "name": "send_email",
    "arguments": {
        "email": "ann.lee@example.com",
        "body": "Ann's SSN is 123-45-6789; card 4111 1111 1111 1111",
    },
}


def _show(title: str, value: Any) -> None:
    print(f"  {title}: {json.dumps(value, ensure_ascii=False)}")


def _banner(text: str) -> None:
    print(f"\n== {text}")


async def demo(policies: Path) -> int:
    _banner(f"policyc check {policies}")
    checked = check_paths([policies])
    print(f"  {len(checked.errors)} error(s), {len(checked.warnings)} warning(s)")
    if not checked.ok:
        return 1

    command = (sys.executable, "-m", "policy_engine.cli.main", "serve", str(policies))
    _banner("policyc serve (stdio), reached with the MCP SDK client")
    spec = ServerSpec(command=command, id="policyc")
    async with RemoteProvider(spec) as server:
        descriptors = await server.discover()
        print(f"  interceptors/list -> {len(descriptors)} interceptors")
        for d in descriptors:
            hooks = ", ".join(f"{'|'.join(h.events)} {h.phase}" for h in d.hooks)
            print(f"    {d.type:<10} {d.name:<18} on {hooks}")

        _banner("interceptor/invoke tool-guard: a call that policy blocks")
        _show("payload", BLOCKED_CALL)
        blocked = await server.invoke(
            InvokeParams(
                name="tool-guard", event="tools/call", phase="request", payload=BLOCKED_CALL
            )
        )
        assert isinstance(blocked, ValidationResult)
        print(f"  valid: {blocked.valid}, severity: {blocked.severity}")
        for message in blocked.messages or []:
            print(f"    [{message.severity}] {message.path}: {message.message}")

        _banner("interceptor/invoke pii-redactor: a call carrying personal data")
        _show("payload ", PERSONAL_CALL)
        redacted = await server.invoke(
            InvokeParams(
                name="pii-redactor", event="tools/call", phase="request", payload=PERSONAL_CALL
            )
        )
        assert isinstance(redacted, MutationResult)
        print(f"  modified: {redacted.modified}")
        _show("redacted", redacted.payload)

    _banner("the SEP chain over the server, as a client sending tools/call")
    async with InterceptorChain.connect(servers=[spec]) as chain:
        for payload in (PERSONAL_CALL, BLOCKED_CALL):
            params = ChainExecutionParams(event="tools/call", phase="request", payload=payload)
            result = await chain.execute(params, side=side_for("client", "request"))
            order = " -> ".join(r.interceptor for r in result.results)
            print(f"  {payload['name']}: {result.status} (ran {order})")
            if result.aborted_at is not None:
                print(f"    blocked by {result.aborted_at.interceptor}: {result.aborted_at.reason}")
            else:
                _show("forwarded", result.final_payload)
    return 0


def main() -> None:
    policies = Path(sys.argv[1]) if len(sys.argv) > 1 else POLICIES
    sys.exit(anyio.run(demo, policies))


if __name__ == "__main__":
    main()

"""SEP-2624 Security Best Practices 1 and 7: interceptors see only what they need, sandboxed.

A policy reads the event's payload (`$`), its own params and the invocation
context, and nothing else: a rule that tries the environment, a file or the
network does not compile, so no served interceptor can.
"""

from __future__ import annotations

import pytest

from policy_engine.compiler import CompileError, compile_sources

REACHES = [
    'env.HOME == "x"',
    'os.environ == "x"',
    'file("/etc/passwd") == "x"',
    'read("/etc/passwd") == "x"',
    'http("http://169.254.169.254/") == "x"',
    'exec("id") == "x"',
    'import("os") == "x"',
]


def _policy(condition: str) -> str:
    return f'validator v "d" {{\n  on tools/call request\n  deny if {condition} "no" code c\n}}\n'


@pytest.mark.parametrize("condition", REACHES)
def test_a_rule_cannot_reach_outside_its_payload_params_and_context(condition: str) -> None:
    with pytest.raises(CompileError):
        compile_sources({"reach.policy": _policy(condition)})


def test_the_payload_and_the_context_are_what_a_rule_reads() -> None:
    policies = compile_sources({"ok.policy": _policy('$.name == "x" and context.sessionId == "s"')})
    verdict = policies.invoke_sync(
        "v", "tools/call", "request", {"name": "x"}, context={"sessionId": "s"}
    )
    assert getattr(verdict, "valid", None) is False

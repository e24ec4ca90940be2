"""`CompiledInterceptor.hooks` answers from a set what the descriptor's scan answers."""

from __future__ import annotations

import itertools

import pytest

from policy_engine.compiler import compile_sources

HOOKS = {
    "named": "on tools/call request\n  on resources/read response",
    "everything": "on * both",
    "namespace": "on tools/* request\n  on prompts/get response",
    "mixed": "on tools/call, resources/* request\n  on * response",
}
EVENTS = ["tools/call", "tools/list", "tools/", "tools/*", "resources/read", "prompts/get", "x"]


@pytest.mark.parametrize("name", sorted(HOOKS))
def test_the_index_agrees_with_the_descriptor(name: str) -> None:
    source = f'validator {name} "V" {{\n  {HOOKS[name]}\n  deny if exists $._meta "x" code x\n}}\n'
    interceptor = compile_sources({"h.policy": source}).interceptors[name]
    for event, phase in itertools.product(EVENTS, ("request", "response")):
        expected = interceptor.descriptor.hooks_event(event, phase)  # type: ignore[arg-type]
        assert interceptor.hooks(event, phase) is expected, (event, phase)  # type: ignore[arg-type]

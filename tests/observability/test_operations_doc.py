"""docs/operations.md's trace example, run: the gateway command it shows (its backend
swapped for the test's recording server, its collector for a real OTLP/HTTP receiver),
the client request it shows sent through it, and the trace received compared with the
trace the page prints. Every flag of the page's commands exists."""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path

import anyio
import pytest
from gateway_harness import ROOT, free_port, recorder, running
from mcp import Client
from mcp.shared.exceptions import MCPError
from otlp_receiver import ReceivedSpan, otlp_receiver

from policy_engine.cli.gateway import gateway
from policy_engine.cli.serve import serve

pytestmark = pytest.mark.e2e

PAGE = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
TRACES = PAGE[PAGE.index("## Traces") : PAGE.index("## Logs")]
SHOWN = ("policyc.chain.status", "policyc.outcome", "policyc.rules")


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", TRACES, flags=re.S)


def commands() -> dict[str, list[str]]:
    found = {}
    for block in blocks("sh"):
        for line in block.splitlines():
            if line.startswith("policyc "):
                argv = shlex.split(line)
                found[argv[1]] = argv[1:]
    return found


def test_every_flag_in_the_trace_commands_exists() -> None:
    known = {
        "gateway": {opt for param in gateway.params for opt in getattr(param, "opts", [])},
        "serve": {opt for param in serve.params for opt in getattr(param, "opts", [])},
    }
    found = commands()
    assert set(found) == {"gateway", "serve"}
    for name, argv in found.items():
        flags = [arg for arg in argv if arg.startswith("--")]
        assert "--otlp-endpoint" in flags
        assert set(flags) <= known[name], (name, flags)


def render(spans: list[ReceivedSpan], root: ReceivedSpan) -> str:
    """The page's form: one span a line, indented under its parent, chosen attributes."""
    lines = [f"{root.name} (parent {root.parent_span_id}, the client's span)"]

    def under(parent: ReceivedSpan, depth: int) -> None:
        for span in sorted((s for s in spans if s.parent_span_id == parent.span_id), key=str):
            shown = []
            for key in SHOWN:
                if key in span.attributes:
                    value = span.attributes[key]
                    shown.append(f"{key}={','.join(value) if isinstance(value, list) else value}")
            lines.append("  " * depth + span.name + (f" [{', '.join(shown)}]" if shown else ""))
            under(span, depth + 1)

    under(root, 1)
    return "\n".join(lines) + "\n"


async def test_the_trace_example_exports_the_trace_the_page_shows(tmp_path: Path) -> None:
    argv = commands()["gateway"]
    params = json.loads(blocks("json")[0])
    traceparent = params["_meta"]["traceparent"]
    trace_id, client_span = traceparent.split("-")[1:3]
    (expected,) = [b for b in blocks("text") if b.startswith("gateway ")]
    port = free_port()
    with otlp_receiver() as receiver:
        swapped = {
            "--backend": recorder(tmp_path / "calls.log", "files"),
            "--http": f"127.0.0.1:{port}",
            "--otlp-endpoint": receiver.url,
        }
        for flag, replacement in swapped.items():
            argv[argv.index(flag) + 1] = replacement
        command = [sys.executable, "-m", "policy_engine.cli.main", *argv]
        with running(command, port, env={"OTEL_BSP_SCHEDULE_DELAY": "50"}) as url:
            with anyio.fail_after(120):
                async with Client(url, mode="legacy") as client:
                    with pytest.raises(MCPError):
                        await client.call_tool(
                            params["name"], params["arguments"], meta=params["_meta"]
                        )

            def complete(spans: list[ReceivedSpan]) -> bool:
                ours = [s for s in spans if s.trace_id == trace_id]
                return len(ours) == expected.count("\n")

            spans = receiver.wait_for(complete)
    ours = [s for s in spans if s.trace_id == trace_id]
    assert {s.service for s in ours} == {"edge-gateway"}
    (root,) = [s for s in ours if s.parent_span_id == client_span]
    assert render(ours, root) == expected

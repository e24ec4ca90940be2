"""Starting the real gateway (``policyc gateway`` in a subprocess) in front of real backends."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
RECORDER = HERE / "recording_backend.py"
TEST_POLICIES = HERE / "policies" / "gateway_test.policy"
SHIPPED = [ROOT / "policies" / "tool-guard.policy", ROOT / "policies" / "pii.policy"]
EVERYTHING = (
    ROOT / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
)


def recorder(log: Path, name: str = "rec") -> str:
    return f"{name}={sys.executable} {RECORDER} {log}"


def gateway_argv(*args: str, policies: Sequence[Path] | None = None) -> list[str]:
    chosen = [*SHIPPED, TEST_POLICIES] if policies is None else list(policies)
    return ["-m", "policy_engine.cli.main", "gateway", *map(str, chosen), *args]


def stdio_gateway(*args: str, policies: Sequence[Path] | None = None) -> Any:
    params = StdioServerParameters(
        command=sys.executable, args=gateway_argv(*args, policies=policies), cwd=str(ROOT)
    )
    return stdio_client(params)


@asynccontextmanager
async def gateway_client(
    *args: str, policies: Sequence[Path] | None = None, **client_options: Any
) -> AsyncIterator[Client]:
    client_options.setdefault("mode", "legacy")
    async with Client(stdio_gateway(*args, policies=policies), **client_options) as client:
        yield client


def calls(log: Path) -> list[dict[str, Any]]:
    """What the recording backend actually ran."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line]


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def everything(name: str = "ev") -> str:
    """The reference "everything" server from npm, over stdio."""
    return f"{name}=node {EVERYTHING} stdio"

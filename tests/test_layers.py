"""The package's layers import one way only; this reads every module's imports.

The layers form a diamond over ``wire``: ``language`` then ``compiler`` on one
side, ``chain`` and ``server`` (wire only) on the other. ``testing`` joins the
compiler and the chain; ``interception`` (chain runs for MCP messages) sits on
the chain, and ``gateway``, ``authoring``, ``conformance`` and ``cli`` on top.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "policy_engine"

# Which of the package's own layers each layer may import (`__init__` holds only the version).
ALLOWED = {
    "wire": {"wire", "__init__"},
    "language": {"wire", "language", "__init__"},
    "compiler": {"wire", "language", "compiler", "flow", "__init__"},
    "chain": {"wire", "chain", "__init__"},
    # Session flow state: standard library (and the optional redis client) only.
    "flow": {"flow", "__init__"},
    "testing": {"wire", "language", "compiler", "chain", "testing", "__init__"},
    # Metrics, health and readiness: one module of definitions every host calls into.
    "observability": {"wire", "observability", "__init__"},
    "server": {"wire", "server", "observability", "__init__"},
    # The interception core: MCP messages -> chain runs, shared by every host.
    "interception": {"wire", "chain", "interception", "__init__"},
    "gateway": {
        "wire",
        "language",
        "compiler",
        "chain",
        "interception",
        "server",
        "flow",
        "observability",
        "gateway",
        "__init__",
    },
    # In-code hosts: policies inside your own MCP server or client, around the same core
    # (and the interceptor server's SEP handlers, for a server that exposes its chain).
    "integrations": {"wire", "chain", "interception", "server", "integrations", "__init__"},
    # Editor and browser front ends over the checker and the in-process chain.
    "authoring": {"wire", "language", "compiler", "chain", "testing", "authoring", "__init__"},
    # What a policy change does: replay, diff and sampling over the in-process chain.
    "impact": {"wire", "language", "compiler", "chain", "testing", "impact", "__init__"},
    # The suite's data and, on top of everything, its runner.
    "conformance": {
        "wire",
        "language",
        "compiler",
        "chain",
        "testing",
        "server",
        "conformance",
        "__init__",
    },
    "cli": {
        "wire",
        "language",
        "compiler",
        "chain",
        "testing",
        "server",
        "conformance",
        "interception",
        "gateway",
        "authoring",
        "impact",
        "flow",
        "observability",
        "cli",
        "__init__",
    },
}
# Third-party imports that mark a layer as transport-bound.
FORBIDDEN_EXTERNAL = {
    "wire": {"mcp", "mcp_types", "lark", "click"},
    "language": {"mcp", "mcp_types"},
    "interception": {"mcp", "mcp_types"},
    "observability": {"mcp", "mcp_types"},
}


def _layer_imports(path: Path, layer: str) -> tuple[set[str], set[str]]:
    """Our layers and top-level third-party packages that ``path`` imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    ours: set[str] = set()
    external: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = list(path.relative_to(PACKAGE).parts[:-1])
                up = node.level - 1
                base = parts[: len(parts) - up] if up else parts
                target = [*base, *(node.module.split(".") if node.module else [])]
                ours.add(target[0] if target else "__init__")
            elif node.module and node.module.startswith("policy_engine"):
                pieces = node.module.split(".")
                ours.add(pieces[1] if len(pieces) > 1 else "__init__")
            elif node.module:
                external.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("policy_engine."):
                    ours.add(alias.name.split(".")[1])
                else:
                    external.add(alias.name.split(".")[0])
    return ours, external


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_imports_only_layers_below(layer: str) -> None:
    problems = []
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        ours, external = _layer_imports(path, layer)
        for imported in ours - ALLOWED[layer]:
            problems.append(f"{path.relative_to(PACKAGE)} imports {imported}")
        for imported in external & FORBIDDEN_EXTERNAL.get(layer, set()):
            problems.append(f"{path.relative_to(PACKAGE)} imports {imported}")
    assert not problems, "\n".join(problems)


def test_chain_and_server_stand_on_wire_alone() -> None:
    """The diamond's right side: transports and the chain never need the compiler
    (the server reports to observability, which stands on wire alone)."""
    assert ALLOWED["chain"] == {"wire", "chain", "__init__"}
    assert ALLOWED["server"] == {"wire", "server", "observability", "__init__"}
    assert ALLOWED["observability"] == {"wire", "observability", "__init__"}
    assert "chain" not in ALLOWED["compiler"] and "server" not in ALLOWED["testing"]


def test_every_layer_is_known() -> None:
    layers = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert layers <= set(ALLOWED), layers - set(ALLOWED)

"""The package's layers import one way only; this reads every module's imports.

The layers form a diamond over ``wire``: ``language`` then ``compiler`` on one
side, ``chain`` and ``server`` (wire only) on the other. ``testing`` joins the
compiler and the chain; ``interception`` (chain runs for MCP messages) sits on
the chain, and ``gateway``, ``integrations``, ``authoring``, ``impact``,
``conformance`` and ``cli`` on top. The table below is the graph the code has,
edge for edge, and docs/architecture.md must describe every layer in it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "policy_engine"

# Exactly which of the package's own layers each layer imports (itself left out;
# `__init__` holds only the version). A layer that starts or stops using another
# fails `test_layer_imports_exactly_what_is_declared`: change this table, and the
# diagram in docs/architecture.md with it.
ALLOWED: dict[str, set[str]] = {
    "wire": set(),
    "language": {"wire"},
    # Flow rules lower onto the session flow store, rate limits onto their counters.
    "compiler": {"wire", "language", "flow", "limits"},
    "chain": {"wire"},
    # Session flow state: standard library (and the optional redis client) only.
    "flow": set(),
    # Rate-limit counters: standard library (and the optional redis client) only.
    "limits": set(),
    "testing": {"wire", "language", "compiler", "chain", "limits"},
    # Metrics, health and readiness: one module of definitions every host calls into.
    "observability": {"wire"},
    "server": {"wire", "observability", "__init__"},
    # The interception core: MCP messages -> chain runs, shared by every host.
    "interception": {"wire", "chain"},
    # The compiler only for the decision log's redaction (`compiler.log_redaction`).
    "gateway": {
        "wire",
        "compiler",
        "chain",
        "interception",
        "server",
        "flow",
        "limits",
        "observability",
        "__init__",
    },
    # In-code hosts: policies inside your own MCP server or client, around the same core
    # (and the interceptor server's SEP handlers, for a server that exposes its chain).
    "integrations": {"wire", "chain", "interception", "server"},
    # Editor and browser front ends over the checker and the in-process chain.
    "authoring": {"wire", "language", "compiler", "chain", "testing", "__init__"},
    # What a policy change does: replay, diff and sampling over the in-process chain.
    "impact": {"wire", "language", "compiler", "chain", "testing"},
    # The suite's data and, on top of everything, its runner.
    "conformance": {"wire", "language", "compiler", "chain"},
    "cli": {
        "wire",
        "language",
        "compiler",
        "chain",
        "testing",
        "server",
        "conformance",
        "gateway",
        "authoring",
        "impact",
        "flow",
        "limits",
        "observability",
        "__init__",
    },
}
# Third-party imports that mark a layer as transport-bound.
FORBIDDEN_EXTERNAL = {
    "wire": {"mcp", "mcp_types", "lark", "click"},
    "language": {"mcp", "mcp_types"},
    "interception": {"mcp", "mcp_types"},
    "limits": {"mcp", "mcp_types", "lark", "click", "anyio"},
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


def _used(layer: str) -> set[str]:
    """The layers ``layer``'s modules import, itself left out."""
    used: set[str] = set()
    for path in (PACKAGE / layer).rglob("*.py"):
        used |= _layer_imports(path, layer)[0]
    return used - {layer}


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_imports_exactly_what_is_declared(layer: str) -> None:
    problems = []
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        ours, external = _layer_imports(path, layer)
        for imported in ours - ALLOWED[layer] - {layer}:
            problems.append(f"{path.relative_to(PACKAGE)} imports {imported}")
        for imported in external & FORBIDDEN_EXTERNAL.get(layer, set()):
            problems.append(f"{path.relative_to(PACKAGE)} imports {imported}")
    for unused in sorted(ALLOWED[layer] - _used(layer)):
        problems.append(f"{layer} no longer imports {unused}: drop it from ALLOWED")
    assert not problems, "\n".join(problems)


def test_layers_form_no_cycle() -> None:
    """Each layer imports only layers below it: the declared graph orders them."""
    done: set[str] = {"__init__"}
    pending = dict(ALLOWED)
    while pending:
        ready = [layer for layer, below in pending.items() if below <= done]
        assert ready, f"a cycle among {sorted(pending)}"
        for layer in ready:
            done.add(layer)
            del pending[layer]


def test_chain_and_server_stand_on_wire_alone() -> None:
    """The diamond's right side: transports and the chain never need the compiler
    (the server reports to observability, which stands on wire alone)."""
    assert ALLOWED["chain"] == {"wire"}
    assert ALLOWED["server"] - {"__init__"} == {"wire", "observability"}
    assert ALLOWED["observability"] == {"wire"}
    assert "chain" not in ALLOWED["compiler"] and "server" not in ALLOWED["testing"]


def test_every_layer_is_known() -> None:
    assert _layers() == set(ALLOWED), _layers() ^ set(ALLOWED)


def _layers() -> set[str]:
    return {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}


ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"


def test_architecture_doc_lists_the_import_graph_of_the_code() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    table = text.split("## Who imports whom", 1)[1]
    rows = re.findall(r"^\| `(\w+)` \| (.+) \|$", table, re.M)
    documented = {layer: set(re.findall(r"`(\w+)`", deps)) for layer, deps in rows}
    assert documented == ALLOWED


def test_architecture_doc_describes_every_layer() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    listed = set(re.findall(r"^  (\w+)/ ", text, re.M))
    assert _layers() <= listed, sorted(_layers() - listed)


def test_architecture_doc_names_every_stage_and_checker() -> None:
    from policy_engine.language.pipeline import STAGES

    text = ARCHITECTURE.read_text(encoding="utf-8")
    stages = re.findall(r"^\| (\w+) \| `", text, re.M)
    assert [s for s in stages if s != "lower"] == list(STAGES)
    checkers = {p.name for p in (PACKAGE / "language").glob("check_*.py")}
    missing = sorted(name for name in checkers if f"`{name}`" not in text)
    assert missing == []

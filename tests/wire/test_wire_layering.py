"""``policy_engine.wire`` is the bottom layer: importing it loads no SDK, parser or CLI."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = ("mcp", "mcp_types", "lark", "click")
PROBE = (
    "import sys; {imports}; "
    "print(sorted(m for m in sys.modules if m.split('.')[0] in {forbidden!r}))"
)


def loaded_forbidden(imports: str) -> list[str]:
    """The forbidden modules present after ``imports`` runs in a fresh interpreter."""
    completed = subprocess.run(
        [sys.executable, "-c", PROBE.format(imports=imports, forbidden=FORBIDDEN)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    names = ast.literal_eval(completed.stdout.strip())
    assert isinstance(names, list)
    return names


def test_wire_imports_no_higher_layer_dependency() -> None:
    assert loaded_forbidden("import policy_engine.wire") == []


def test_probe_notices_a_forbidden_import() -> None:
    # Control: the same probe does report a forbidden package once it is loaded,
    # so an empty answer above means something.
    assert "click" in loaded_forbidden("import policy_engine.wire, click")

"""The public SEP-2624 conformance suite, carried inside the package as data, and its runner.

The fixtures ship in the wheel so that the runner and the tests work from any
clone or install, with nothing beside the repository. ``suite/PROVENANCE.md``
says where the files come from; they are byte-identical to upstream.

Modules, one job each: ``suite`` reads the manifest and fixtures into typed
steps; ``jcs`` is RFC 8785 canonical JSON; ``checks`` compares an answer with
a step's expectation; ``runner`` starts a server per fixture and runs the
steps; ``report`` tallies and renders; ``contract`` names what the runner
hands a server; ``adapter`` binds the named behaviours for policyc's own
reference adapter. Only ``runner`` reaches the MCP SDK (through the chain).
"""

from __future__ import annotations

from pathlib import Path

SUITE_DIR = Path(__file__).resolve().parent / "suite"
"""Folder holding ``manifest.json``, ``schema/`` and ``fixtures/`` as published upstream."""

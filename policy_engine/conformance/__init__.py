"""The public SEP-2624 conformance suite, carried inside the package as data.

The fixtures ship in the wheel so that the runner and the tests work from any
clone or install, with nothing beside the repository. ``suite/PROVENANCE.md``
says where the files come from; they are byte-identical to upstream.
"""

from __future__ import annotations

from pathlib import Path

SUITE_DIR = Path(__file__).resolve().parent / "suite"
"""Folder holding ``manifest.json``, ``schema/`` and ``fixtures/`` as published upstream."""

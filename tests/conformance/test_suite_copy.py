"""The conformance suite shipped in the package is the upstream copy, untouched.

The digests were taken when the copy was made (see the suite's PROVENANCE.md);
an edit, a lost file or a stray new one fails here.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from policy_engine.conformance import SUITE_DIR

DIGESTS = json.loads((Path(__file__).with_name("suite_digests.json")).read_text())


def test_every_suite_file_matches_its_pinned_digest() -> None:
    on_disk = {
        str(path.relative_to(SUITE_DIR)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(SUITE_DIR.rglob("*.json"))
    }
    assert on_disk == DIGESTS


def test_manifest_lists_every_fixture_file() -> None:
    manifest = json.loads((SUITE_DIR / "manifest.json").read_text())
    listed = sorted(entry["file"] for entry in manifest["fixtures"])
    present = sorted(
        str(path.relative_to(SUITE_DIR)) for path in (SUITE_DIR / "fixtures").rglob("*.json")
    )
    assert listed == present
    assert len(listed) == 24

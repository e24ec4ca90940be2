"""docs/conformance.md's requirements table names tests that exist, on every row.

A row whose proof is a file or folder, a bare test name, or a test that was
renamed away would trace a requirement to nothing; this reads the section
and resolves every reference: `file.py::test_name` to a test function in
that file, fixtures to the suite's files, language cases to their files.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
DOC = ROOT / "docs" / "conformance.md"
SUITE = ROOT / "policy_engine" / "conformance" / "suite"

REFERENCE = re.compile(r"`([\w/]+\.py)::(\w+)`")
FIXTURE = re.compile(r"fixtures? ((?:`[\w-]+`(?:, )?)+)")
CASE = re.compile(r"cases? ((?:`\w+/\w+`(?:, )?)+)")


def _section() -> str:
    text = DOC.read_text()
    start = text.index("## The SEP's requirements")
    return text[start : text.index("\n## ", start + 1)]


def _rows() -> list[list[str]]:
    rows = []
    for line in _section().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if line.startswith("| ") and not line.startswith("| ---") and cells[-1] != "proven by":
            rows.append(cells)
    return rows


def _defines(path: Path, name: str) -> bool:
    return re.search(rf"^(?:async )?def {name}\(", path.read_text(), re.MULTILINE) is not None


def test_every_row_names_a_test_that_exists() -> None:
    rows = _rows()
    assert len(rows) > 40
    for cells in rows:
        proof = cells[-1]
        found = REFERENCE.findall(proof)
        assert found, f"row {cells[0]} names no test: {proof}"
        for file, name in found:
            path = TESTS / file
            assert path.is_file(), f"row {cells[0]}: no file tests/{file}"
            assert _defines(path, name), f"row {cells[0]}: tests/{file} has no {name}"


def test_no_row_names_a_bare_test_or_a_folder() -> None:
    for cells in _rows():
        proof = REFERENCE.sub("", cells[-1])
        assert not re.search(r"`test_\w+`|`\w+/`", proof), f"row {cells[0]}: {cells[-1]}"


def test_numbered_rows_run_in_order() -> None:
    numbers = [int(cells[0]) for cells in _rows() if cells[0].isdigit()]
    assert numbers == list(range(1, len(numbers) + 1))


def test_named_fixtures_and_language_cases_exist() -> None:
    manifest = json.loads((SUITE / "manifest.json").read_text())
    fixtures = {entry["id"].split("/", 1)[1] for entry in manifest["fixtures"]}
    section = _section()
    named = [n for group in FIXTURE.findall(section) for n in re.findall(r"`([\w-]+)`", group)]
    assert named and set(named) <= fixtures, set(named) - fixtures
    cases = [c for group in CASE.findall(section) for c in re.findall(r"`(\w+/\w+)`", group)]
    assert cases
    for case in cases:
        assert (TESTS / "language" / "cases" / f"{case}.policy").is_file(), case

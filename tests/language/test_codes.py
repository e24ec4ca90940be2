"""The diagnostic code registry (``language/codes.Code``) is the only home of a code.

docs/diagnostics.md (``test_diagnostics_doc``) and the spec cases (``test_spec_cases``)
are checked against the registry, so a new code is one line in ``codes.py`` and these
tests then ask for the rest. ``tests/test_one_home.py`` refuses a bare code string
anywhere else in the package.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from policy_engine.language.codes import CODES, DOC, Code, Severity
from policy_engine.language.diagnostics import Diagnostic, Span

ROOT = Path(__file__).resolve().parents[2]
SPAN = Span("x.policy", 1, 1, 1, 2)


@pytest.mark.parametrize("code", list(Code), ids=str)
def test_code_is_its_own_name_and_its_prefix_says_its_severity(code: Code) -> None:
    assert code == code.name == code.value and re.fullmatch(r"[EW]\d{3}", code)
    assert code.severity is (Severity.ERROR if code.startswith("E") else Severity.WARNING)
    assert code.summary and code.summary == CODES[code]


def test_a_diagnostic_takes_its_severity_from_its_code() -> None:
    assert Diagnostic(Code.W310, "m", SPAN).severity is Severity.WARNING
    assert Diagnostic(Code.E204, "m", SPAN).is_error


def test_a_diagnostic_refuses_a_code_outside_the_registry() -> None:
    with pytest.raises(KeyError):
        Diagnostic("E999", "m", SPAN)  # type: ignore[arg-type]


def test_each_code_links_to_its_section_in_the_docs() -> None:
    text = (ROOT / DOC).read_text(encoding="utf-8")
    headings = re.findall(r"^## ([EW]\d{3}: .+)$", text, re.M)
    anchors = {re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-") for h in headings}
    for code in Code:
        assert code.doc == f"{DOC}#{code.anchor}"
        assert code.anchor in anchors, code

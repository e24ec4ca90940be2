"""docs/diagnostics.md cannot rot: every code is documented, and every example is real.

Each ``## CODE: title`` section holds one ```` ```policy ```` example and one
```` ```text ```` block. Checked alone as ``example.policy``, the example must
produce that code, and the text block must be exactly what ``render_text``
prints for it. A ``<!-- example: KEY=VALUE ... -->`` line says how the example
is fed: ``encoding=NAME`` saves it in that encoding, any other key is a
``SourceLimits`` field (``max_nesting=3``), so limits show on small examples.
After an intended change to a message, rewrite the text blocks and review the
diff::

    POLICYC_UPDATE_CASES=1 pytest tests/language/test_diagnostics_doc.py
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from policy_engine.language.check_tools import load_snapshot
from policy_engine.language.codes import CODES, Code
from policy_engine.language.diagnostics import render_text
from policy_engine.language.limits import SourceLimits
from policy_engine.language.pipeline import check_sources

DOC = Path(__file__).resolve().parents[2] / "docs" / "diagnostics.md"
UPDATE = os.environ.get("POLICYC_UPDATE_CASES") == "1"
HEADING = re.compile(r"^## ([EW]\d{3}): (.+)$", re.M)
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)
EXAMPLE_FILE = "example.policy"
DIRECTIVE = re.compile(r"^<!-- example: (.+) -->$", re.M)


@dataclass(frozen=True)
class Section:
    code: str
    title: str
    body: str
    start: int  # offset of the body in the document


@cache
def sections() -> tuple[Section, ...]:
    text = DOC.read_text(encoding="utf-8")
    found = list(HEADING.finditer(text))
    result = []
    for match, following in zip(found, [*found[1:], None], strict=True):
        end = following.start() if following is not None else len(text)
        result.append(Section(match[1], match[2], text[match.end() : end], match.end()))
    return tuple(result)


def fences(section: Section, language: str) -> list[str]:
    return [m[2] for m in FENCE.finditer(section.body) if m[1] == language]


def rendered(example: str, code: str, body: str = "", snapshot: str | None = None) -> str:
    settings = dict(
        pair.split("=", 1) for found in DIRECTIVE.findall(body) for pair in found.split()
    )
    encoding = settings.pop("encoding", None)
    source = example.encode(encoding) if encoding else example
    limits = SourceLimits(**{key: int(value) for key, value in settings.items()})
    tools = load_snapshot(snapshot) if snapshot is not None else None
    result = check_sources({EXAMPLE_FILE: source}, limits=limits, tools=tools)
    return "\n\n".join(render_text(d, result.sources) for d in result.diagnostics if d.code == code)


def test_every_code_is_documented_once_in_catalogue_order() -> None:
    assert [s.code for s in sections()] == list(CODES)
    for section in sections():
        assert section.title == CODES[section.code], section.code


def test_the_table_links_every_code() -> None:
    text = DOC.read_text(encoding="utf-8")
    for code in Code:
        assert f"| [{code}](#{code.anchor}) | {code.summary} |" in text, code


def test_every_policy_block_belongs_to_a_section() -> None:
    text = DOC.read_text(encoding="utf-8")
    everywhere = [m[2] for m in FENCE.finditer(text) if m[1] == "policy"]
    in_sections = [block for s in sections() for block in fences(s, "policy")]
    assert everywhere == in_sections


def snapshot(section: Section) -> str | None:
    """A ```json block in a section is the `--tools` snapshot its example is checked with."""
    found = fences(section, "json")
    return found[0] if found else None


@cache
def rewrite_text_blocks() -> None:
    """POLICYC_UPDATE_CASES=1: put the actual output in every ``text`` block, once."""
    text = DOC.read_text(encoding="utf-8")
    for section in reversed(sections()):
        (example,) = fences(section, "policy")
        for match in FENCE.finditer(section.body):
            if match[1] == "text":
                start, end = section.start + match.start(2), section.start + match.end(2)
                shown = rendered(example, section.code, section.body, snapshot(section))
                text = text[:start] + shown + "\n" + text[end:]
    DOC.write_text(text, encoding="utf-8")
    sections.cache_clear()


@pytest.mark.parametrize("code", [s.code for s in sections()])
def test_example_produces_its_code(code: str) -> None:
    if UPDATE:
        rewrite_text_blocks()
    section = next(s for s in sections() if s.code == code)
    (example,) = fences(section, "policy")
    (shown,) = fences(section, "text")
    actual = rendered(example, code, section.body, snapshot(section))
    assert actual, f"the {code} example does not produce {code}"
    assert shown == actual + "\n"


@pytest.mark.parametrize("section", sections(), ids=[s.code for s in sections()])
def test_section_explains_the_fix(section: Section) -> None:
    prose = FENCE.sub("", section.body).strip()
    assert "**Fix:**" in prose, section.code
    meaning = prose.split("\n\n")[0]
    assert len(meaning) > 40, section.code

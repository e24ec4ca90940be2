"""RFC 8785 canonical JSON: the RFC's own vectors, then a cross-check against Node.js.

The conformance suite compares results in JCS form; its fixtures hold only
ASCII and small integers, so these cases cover what they do not: floats at
the edges of ECMAScript's number formatting, non-ASCII and astral-plane keys
(which sort by UTF-16 code units, not code points) and string escaping.
"""

from __future__ import annotations

import json
import random
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest

from policy_engine.conformance.jcs import CanonicalizationError, canonicalize

pytestmark = pytest.mark.e2e

HERE = Path(__file__).resolve().parent
VECTORS = json.loads((HERE / "jcs_vectors.json").read_text(encoding="utf-8"))
NODE_SCRIPT = HERE / "jcs_node.mjs"


def _double(bits: str) -> float:
    value: float = struct.unpack(">d", bytes.fromhex(bits))[0]
    return value


@pytest.mark.parametrize("case", VECTORS["numbers"], ids=lambda c: c["bits"])
def test_rfc_number_samples(case: dict[str, str]) -> None:
    assert canonicalize(_double(case["bits"])) == case["canonical"]


@pytest.mark.parametrize("case", VECTORS["documents"], ids=lambda c: c["note"][:40])
def test_documents(case: dict[str, str]) -> None:
    assert canonicalize(json.loads(case["input"])) == case["canonical"]


@pytest.mark.parametrize("case", VECTORS["errors"], ids=lambda c: c["note"])
def test_values_without_a_canonical_form(case: dict[str, str]) -> None:
    with pytest.raises(CanonicalizationError):
        canonicalize(json.loads(case["input"]))


@pytest.mark.parametrize("value", [{1: 2}, b"bytes", {"k": {1.5}}], ids=["int-key", "bytes", "set"])
def test_python_values_that_are_not_json(value: Any) -> None:
    with pytest.raises(CanonicalizationError):
        canonicalize(value)


def test_canonical_form_is_a_fixed_point_of_parsing() -> None:
    for case in VECTORS["documents"]:
        text = canonicalize(json.loads(case["input"]))
        assert canonicalize(json.loads(text)) == text


# Code points that exercise every escaping rule and the UTF-16 ordering:
# controls, the two escaped printables, DEL, Latin-1, the private-use and
# presentation-forms ranges above the surrogates, and astral characters.
_POOL = [
    *map(chr, range(0x00, 0x21)),
    '"',
    "\\",
    "/",
    "a",
    "Z",
    "\x7f",
    "\x80",
    "\xe9",
    "\u20ac",
    "\ue000",
    "\ufb33",
    "\uffff",
    "\U00010000",
    "\U0001d11e",
    "\U0001f600",
    "\U0010ffff",
]


def _random_string(rng: random.Random) -> str:
    return "".join(rng.choice(_POOL) for _ in range(rng.randint(0, 8)))


def _cases(seed: int, count: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    cases: list[dict[str, Any]] = []
    for _ in range(count):
        bits = rng.getrandbits(64)
        if (bits >> 52) & 0x7FF == 0x7FF:  # NaN and the infinities have no JSON form
            bits &= ~(1 << 62)
        cases.append({"bits": f"{bits:016x}"})
        # Doubles that print in fixed notation, where most formatting rules live.
        scaled = rng.uniform(-1, 1) * 10 ** rng.randint(-8, 22)
        cases.append({"bits": struct.pack(">d", scaled).hex()})
        cases.append({"text": _random_string(rng)})
        cases.append({"keys": sorted({_random_string(rng) for _ in range(rng.randint(1, 6))})})
    return cases


def _ours(case: dict[str, Any]) -> str:
    if "bits" in case:
        return canonicalize(_double(case["bits"]))
    if "text" in case:
        return canonicalize(case["text"])
    return canonicalize({key: index for index, key in enumerate(case["keys"])})


def test_agrees_with_node_json_stringify() -> None:
    node = shutil.which("node")
    assert node is not None, "Node.js is required, as for the TypeScript interop tests"
    cases = _cases(seed=8785, count=1500)
    lines = "".join(json.dumps(case) + "\n" for case in cases)
    done = subprocess.run(
        [node, str(NODE_SCRIPT)],
        input=lines.encode(),
        capture_output=True,
        timeout=60,
        check=True,
    )
    theirs = done.stdout.decode("utf-8").splitlines()
    assert len(theirs) == len(cases)
    mismatches = [
        (case, ours, their)
        for case, ours, their in zip(cases, map(_ours, cases), theirs, strict=True)
        if ours != their
    ]
    assert mismatches == []

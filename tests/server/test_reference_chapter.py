"""docs/reference/interceptors.md: every request in it, sent to a real `policyc serve`, gets
the answer printed under it.

The chapter's examples are ```json request / ```json response blocks, in
the order a client sends them; the first is its own initialize. Only
`durationMs` (a number either way) and the server's version may differ.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import pytest
from raw_wire import exchange
from server_harness import REPO

pytestmark = pytest.mark.e2e

CHAPTER = REPO / "docs" / "reference" / "interceptors.md"
POLICY = "examples/reference/interceptors.policy"
SERVE = (sys.executable, "-m", "policy_engine.cli.main", "serve", POLICY)
BLOCK = re.compile(r"```json (request|response)\n(.*?)\n```", re.DOTALL)


def examples() -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """(request, the answer printed under it, or None for a notification)."""
    pairs: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
    for kind, body in BLOCK.findall(CHAPTER.read_text()):
        message = json.loads(body)
        if kind == "request":
            pairs.append((message, None))
        else:
            request, previous = pairs[-1]
            assert previous is None and "id" in request, f"a response without a request: {body}"
            pairs[-1] = (request, message)
    return pairs


def normalized(actual: Any, printed: Any) -> Any:
    """``actual`` with the printed `durationMs` and policyc's printed version put in."""
    if isinstance(actual, list) and isinstance(printed, list) and len(actual) == len(printed):
        return [normalized(a, p) for a, p in zip(actual, printed, strict=True)]
    if not (isinstance(actual, dict) and isinstance(printed, dict)):
        return actual
    out = {k: normalized(v, printed.get(k)) for k, v in actual.items()}
    timed = [d.get("durationMs") for d in (out, printed)]
    if all(isinstance(t, int | float) for t in timed):
        out["durationMs"] = printed["durationMs"]
    if out.get("name") == "policyc" and "version" in out and "version" in printed:
        out["version"] = printed["version"]
    return out


def test_every_request_has_its_answer_and_ids_are_unique() -> None:
    pairs = examples()
    ids = [request["id"] for request, _ in pairs if "id" in request]
    assert len(ids) == len(set(ids)) > 10
    assert all((answer is None) == ("id" not in request) for request, answer in pairs)
    assert pairs[0][0]["method"] == "initialize"


async def test_the_chapter_is_what_policyc_serve_answers() -> None:
    pairs = examples()
    answers, _ = await exchange(SERVE, [r for r, _ in pairs], cwd=REPO, handshake=False)
    for request, printed in pairs:
        if printed is None:
            continue
        actual = answers[request["id"]]
        assert normalized(actual, printed) == printed, json.dumps(actual)

"""The code of a rule written without one: from what it says, not where it sits.

Codes name rules in results, traces, coverage and decision logs, and
reviewers key on them across versions. A line number would change every
time a line is added above the rule, so an uncoded rule is named by its
interceptor, its kind and a short hash of its canonical text (as `policyc
fmt` prints it); identical rules of one interceptor are told apart by
their order (`-2`, `-3`, ...).
"""

from __future__ import annotations

import hashlib

from ..language import ast
from ..language.formatter import render_rule

HASH_CHARS = 6


def content_code(interceptor: str, rule: ast.Rule, taken: dict[str, int] | None = None) -> str:
    """``NAME:KIND-HASH``; with ``taken`` (codes given so far in this interceptor), unique."""
    kind = ast.RULE_KINDS.get(type(rule), "rule")
    digest = hashlib.sha256(render_rule(rule).strip().encode("utf-8")).hexdigest()
    code = f"{interceptor}:{kind}-{digest[:HASH_CHARS]}"
    if taken is None:
        return code
    taken[code] = seen = taken.get(code, 0) + 1
    return code if seen == 1 else f"{code}-{seen}"

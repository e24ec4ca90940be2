"""The one place that reads a diagnostic's did-you-mean, for quick fixes.

Every stage words a suggestion as ``did you mean `X`?`` in ``help``, and the
suggested text replaces exactly the diagnostic's span.
"""

from __future__ import annotations

import re

from ..language.diagnostics import Diagnostic

_DID_YOU_MEAN = re.compile(r"did you mean `([^`]+)`\?")


def suggestion(diagnostic: Diagnostic) -> str | None:
    """The replacement text a diagnostic suggests, or None."""
    if not diagnostic.help:
        return None
    found = _DID_YOU_MEAN.search(diagnostic.help)
    return found.group(1) if found else None

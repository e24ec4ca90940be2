"""The protocol-agnostic interception core: what the chain sees of MCP traffic.

Shared by every host that puts policies in the path of real messages (the
gateway today, the in-code server and client integrations next), so that they
agree on one set of rules: which method is which event, what a payload is (the
payload convention of ``docs/payloads.md``), which side of the trust boundary
runs which stage first, what a block turns into, which methods are never
intercepted, and how a filtered list hides what it removed.

Layers below: ``wire`` and ``chain``. It imports no transport and no MCP SDK.
"""

from .core import (
    INPUT_REQUIRED_METHODS,
    LIST_CHANGED,
    LISTS,
    BlockStyle,
    ChainRun,
    Forward,
    InputKeys,
    Interception,
    InterceptionSession,
    Outcome,
    Refuse,
    Role,
)

__all__ = [
    "INPUT_REQUIRED_METHODS",
    "LISTS",
    "LIST_CHANGED",
    "BlockStyle",
    "ChainRun",
    "Forward",
    "InputKeys",
    "Interception",
    "InterceptionSession",
    "Outcome",
    "Refuse",
    "Role",
]

"""The one home of what the tool and model list sugar applies to.

The checker uses it to refuse a list that can never apply (E212); the
pipeline's desugar stage uses it to lower each list to core rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

TOOL_EVENT = "tools/call"
TOOL_NAME_PATH = "$.name"
# Where each model-bearing event names its model(s).
MODEL_PATHS: Mapping[str, str] = MappingProxyType(
    {
        "sampling/createMessage": "$.modelPreferences.hints[*].name",
        "llm/completion": "$.model",
    }
)
LIST_EVENTS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"tools": (TOOL_EVENT,), "models": tuple(MODEL_PATHS)}
)

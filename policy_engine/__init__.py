"""policyc: a declarative policy engine for MCP (SEP-2624 interceptors).

Layers, each importing only those before it:
``wire`` (SEP types) <- ``language`` (parse, check, format) <- ``compiler``
(lowering and evaluation) <- ``chain`` <- ``server`` / ``cli``.
"""

__version__ = "0.1.0"

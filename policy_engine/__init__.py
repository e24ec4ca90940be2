"""policyc: a declarative policy engine for MCP (SEP-2624 interceptors).

Layers form a diamond over ``wire`` (SEP types, no MCP import): on one side
``language`` (parse, check, format) and then ``compiler`` (lowering and
evaluation); on the other ``chain`` and ``server``, which depend on ``wire``
only. ``testing`` joins the compiler and the chain; ``interception`` (chain
runs for MCP messages) stands on the chain; ``gateway``, ``authoring``,
``conformance`` and ``cli`` sit on top.
"""

__version__ = "0.1.0"

"""Session flow state: what a session has seen, kept as fingerprints, never as values.

Flow rules ("a secret read from one server never reaches another") need
memory across messages. This package holds it: keyed hashes of values per
session, with the server each came from, bounded in count and time, in this
process or in Redis for replicas. It depends on nothing of policyc but the
standard library (and the optional `redis` client).
"""

from .fingerprint import Fingerprinter
from .memory import MemoryFlowStore
from .store import FlowEntry, FlowLimits, FlowStore, FlowStoreError, Recall, on_error

__all__ = [
    "Fingerprinter",
    "FlowEntry",
    "FlowLimits",
    "FlowStore",
    "FlowStoreError",
    "MemoryFlowStore",
    "Recall",
    "on_error",
]

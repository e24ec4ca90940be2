"""Rate-limit and quota counters: one GCRA state per key, in this process or in Redis.

`limit rate` and `limit total` rules need memory across messages. This
package holds it: per key, the theoretical arrival time of the generic cell
rate algorithm (one number), bounded in key count, in this process or in
Redis for replicas. It depends on nothing of policyc but the standard
library (and the optional `redis` client).
"""

from .gcra import Outcome, gcra
from .memory import MemoryLimitStore
from .store import (
    MIN_KEYS,
    TIMEOUT_RANGE_S,
    Charge,
    LimitBounds,
    LimitStore,
    LimitStoreError,
    Verdict,
    on_error,
)

__all__ = [
    "MIN_KEYS",
    "TIMEOUT_RANGE_S",
    "Charge",
    "LimitBounds",
    "LimitStore",
    "LimitStoreError",
    "MemoryLimitStore",
    "Outcome",
    "Verdict",
    "gcra",
    "on_error",
]

"""The observability tests start servers and gateways as the server and gateway tests do."""

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS / "gateway"))
sys.path.insert(0, str(TESTS / "server"))
# The flow tests' real redis-server fixture and `policyc serve` helpers (package `flow`).
sys.path.append(str(TESTS))

"""Wire vocabulary that needs no pydantic: the checker imports only this and
`events`, so `policyc check` starts without building any model class."""

from __future__ import annotations

from typing import Literal

Phase = Literal["request", "response"]
Severity = Literal["info", "warn", "error"]
InterceptorType = Literal["validation", "mutation"]
Mode = Literal["active", "audit"]
# The older spelling of `active`, still accepted from peers and in policies.
MODE_ALIASES: dict[str, Mode] = {"enforce": "active"}

# The SEP-2624 methods an interceptor server answers (one home for chain and server).
LIST_METHOD = "interceptors/list"
INVOKE_METHOD = "interceptor/invoke"
# The SEP's Backward Compatibility section spells it once as `interceptors/invoke`
# and renaming is discussed upstream: every front answers both (docs/conformance.md).
INVOKE_METHOD_ALIAS = "interceptors/invoke"
INVOKE_METHODS = frozenset({INVOKE_METHOD, INVOKE_METHOD_ALIAS})

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1

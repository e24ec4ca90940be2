"""Wire vocabulary that needs no pydantic: the checker imports only this and
`events`, so `policyc check` starts without building any model class."""

from __future__ import annotations

from typing import Literal

Phase = Literal["request", "response"]
Severity = Literal["info", "warn", "error"]
InterceptorType = Literal["validation", "mutation"]
Mode = Literal["active", "audit"]

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1

"""Shared pydantic configuration for SEP-2624 wire objects.

Wire names are camelCase; Python attributes are snake_case. Dumps for the wire
leave out ``None`` so that optional fields that were never set stay absent, as
the conformance fixtures require.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

Phase = Literal["request", "response"]
Severity = Literal["info", "warn", "error"]
InterceptorType = Literal["validation", "mutation"]

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1


class WireModel(BaseModel):
    """Base for every wire object: camelCase aliases, immutable, unknown keys kept."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        extra="allow",
    )

    def to_wire(self) -> dict[str, Any]:
        """The JSON-ready dict for this object, with unset optionals left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)

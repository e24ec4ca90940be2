"""Shared pydantic configuration for SEP-2624 wire objects.

Wire names are camelCase; Python attributes are snake_case. Dumps for the wire
leave out ``None`` so that optional fields that were never set stay absent, as
the conformance fixtures require.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
)
from pydantic.alias_generators import to_camel

from .constants import INT32_MAX, INT32_MIN, InterceptorType, Phase, Severity

__all__ = ["INT32_MAX", "INT32_MIN", "InterceptorType", "Phase", "Severity"]

# A positive whole number of milliseconds. Strict, so a peer sending "10" is told
# so instead of having the string quietly coerced. At most INT32_MAX (about 24.8
# days): a 400-digit value used to reach the deadline arithmetic and fail there
# with an internal OverflowError instead of -32602 naming the field.
TimeoutMs = Annotated[int, Field(gt=0, le=INT32_MAX, strict=True)]


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


def keep_required_nulls(
    self: BaseModel, handler: SerializerFunctionWrapHandler, info: SerializationInfo
) -> dict[str, Any]:
    """Wrap serializer that puts back required fields holding JSON ``null``.

    Attach it with ``_name = model_serializer(mode="wrap")(keep_required_nulls)``;
    pydantic requires the first parameter to be called ``self``.

    ``exclude_none`` is there to leave out optionals that were never set, but it
    also drops a required ``Any`` field whose value is ``null`` on purpose (a
    null payload, a suggestion to set a value to null). The dump would then be
    missing a required key and would not parse again.
    """
    data: dict[str, Any] = handler(self)
    if not info.exclude_none:
        return data
    excluded = info.exclude or ()
    for name, field in type(self).model_fields.items():
        if field.is_required() and name not in excluded and getattr(self, name) is None:
            key = field.alias if info.by_alias and field.alias else name
            data.setdefault(key, None)
    return data

"""Shared pydantic configuration for SEP-2624 wire objects.

Wire names are camelCase; Python attributes are snake_case. Dumps for the wire
leave out ``None`` so that optional fields that were never set stay absent, as
the conformance fixtures require.
"""

from __future__ import annotations

from typing import Annotated, Any, Self

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


_new = object.__new__
_set = object.__setattr__
# Per model class: every field's default in declaration order (None for a required one).
_DEFAULTS: dict[type[BaseModel], dict[str, Any]] = {}


class WireModel(BaseModel):
    """Base for every wire object: camelCase aliases, immutable, unknown keys kept."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        extra="allow",
    )

    @classmethod
    def trusted(cls, values: dict[str, Any]) -> Self:
        """The model of ``values``, already valid and of the validated types, unchecked.

        For results the engine builds itself, many per chain run: the object is
        what validating ``values`` gives (same fields in the same order, same
        fields set, no extras), for about half the instructions of a
        validation (callgrind: 14K against 25K for a `ValidationResult`;
        `model_construct`, in Python, costs twice a validation). Only for models
        without validators of their own; ``values`` becomes the model's: the
        caller hands it over and keeps no reference. tests/wire prove the two
        equal for each model built this way.
        """
        defaults = _DEFAULTS.get(cls)
        if defaults is None:
            if any(field.default_factory is not None for field in cls.model_fields.values()):
                # One default object would be shared by every model built.
                raise TypeError(f"{cls.__name__} has a default factory: validate it instead")
            defaults = _DEFAULTS[cls] = {
                name: None if field.is_required() else field.default
                for name, field in cls.model_fields.items()
            }
        model = _new(cls)
        _set(model, "__dict__", {**defaults, **values})
        _set(model, "__pydantic_fields_set__", set(values))
        _set(model, "__pydantic_extra__", {})
        _set(model, "__pydantic_private__", None)
        return model

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

"""Shared pydantic configuration for SEP-2624 wire objects.

Wire names are camelCase; Python attributes are snake_case. Dumps for the wire
leave out ``None`` so that optional fields that were never set stay absent, as
the conformance fixtures require.
"""

from __future__ import annotations

from collections.abc import Callable
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


class WireModel(BaseModel):
    """Base for every wire object: camelCase aliases, immutable, unknown keys kept."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        extra="allow",
    )

    @classmethod
    def trusted(cls, **fields: Any) -> Self:
        """An instance of fields our own code built and typed, set without validation.

        Only for values that never came from a peer or a user (an in-process
        interceptor's result, the chain's own summary): what crosses a trust
        boundary is validated (`model_validate`). Building a result model the
        validating way costs a few microseconds, several times a chain run;
        this sets the same ``__dict__`` (every field, in declaration order, so
        a dump is identical) and the same set fields. A name that is not a
        field, or a required field left out, is a bug, refused here.
        """
        make = _MAKERS.get(cls) or _maker(cls)
        instance: Self = make(cls, fields)
        return instance

    def to_wire(self) -> dict[str, Any]:
        """The JSON-ready dict for this object, with unset optionals left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


# What `WireModel.trusted` calls per model class: (class, fields) -> instance.
_Maker = Callable[[type[BaseModel], dict[str, Any]], Any]
_MAKERS: dict[type[BaseModel], _Maker] = {}


def _maker(model: type[BaseModel]) -> _Maker:
    """``model``'s trusted constructor, generated once (as `dataclasses` does): one
    dict display in declaration order, each optional field's default bound in.

    A loop over the fields costs more than the validation it replaces saves.
    """
    namespace: dict[str, Any] = {
        "_set": object.__setattr__,
        "_new": object.__new__,
        "_names": frozenset(model.model_fields),
        "_required": frozenset(n for n, f in model.model_fields.items() if f.is_required()),
    }
    items = []
    for index, (name, info) in enumerate(model.model_fields.items()):
        if not name.isidentifier():  # never for our models; refuse rather than exec it
            raise TypeError(f"{model.__name__}: field {name!r} is not an identifier")
        if info.is_required():
            items.append(f"{name!r}: fields[{name!r}]")
        elif info.default_factory is not None:
            raise TypeError(f"{model.__name__}.{name}: trusted() keeps no default factory")
        else:
            namespace[f"_default{index}"] = info.default
            items.append(f"{name!r}: fields.get({name!r}, _default{index})")
    source = f"""def make(cls, fields):
    given = fields.keys()
    if not _required <= given <= _names:
        wrong = sorted((given - _names) | (_required - given))
        raise TypeError(f"{{cls.__name__}}.trusted: unknown or missing {{', '.join(wrong)}}")
    instance = _new(cls)
    _set(instance, "__dict__", {{{", ".join(items)}}})
    _set(instance, "__pydantic_fields_set__", set(fields))
    _set(instance, "__pydantic_extra__", {{}})
    _set(instance, "__pydantic_private__", None)
    return instance
"""
    exec(source, namespace)  # field names checked above; defaults bound by name
    make: _Maker = namespace["make"]
    _MAKERS[model] = make
    return make


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

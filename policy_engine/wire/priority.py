"""Priority hints and their resolution per phase (SEP ``resolvePriority``)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator, Field

from ._base import INT32_MAX, INT32_MIN, Phase, WireModel


def _check_int32(value: object) -> object:
    """Reject out-of-range numbers with the range in the message (bools are not numbers)."""
    if (
        isinstance(value, int)
        and not isinstance(value, bool)
        and not (INT32_MIN <= value <= INT32_MAX)
    ):
        raise ValueError(f"must be a 32-bit signed integer ({INT32_MIN} to {INT32_MAX})")
    return value


Int32 = Annotated[int, BeforeValidator(_check_int32), Field(strict=True)]


class PhasePriority(WireModel):
    """The object form of ``priorityHint``: one optional number per phase."""

    request: Int32 | None = None
    response: Int32 | None = None


PriorityHint = Int32 | PhasePriority


def resolve_priority(
    declared: PriorityHint | None, phase: Phase, override: PriorityHint | None = None
) -> int:
    """The effective priority of an interceptor in ``phase``.

    An override beats the declared hint; a bare number applies to both phases;
    a phase missing from the object form resolves to 0, as does no hint.
    """
    hint = override if override is not None else declared
    if hint is None:
        return 0
    if isinstance(hint, int):
        return hint
    value = hint.request if phase == "request" else hint.response
    return 0 if value is None else value

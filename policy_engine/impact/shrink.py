"""Shrinking a payload to the smallest one that still shows the same change.

Greedy and deterministic: drop object members and list elements, then
shorten strings, keeping each step only if the change (its kind and rule)
survives. Each candidate costs two evaluations, so the number of attempts is
bounded.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from typing import Any

Still = Callable[[Any], Awaitable[bool]]
MAX_ATTEMPTS = 200


def _smaller(value: Any) -> Iterator[Any]:
    """Candidates one step smaller than ``value``, biggest cut first."""
    if isinstance(value, dict):
        for key in list(value):
            yield {k: v for k, v in value.items() if k != key}
        for key, child in value.items():
            for smaller in _smaller(child):
                yield {**value, key: smaller}
    elif isinstance(value, list):
        for index in range(len(value)):
            yield value[:index] + value[index + 1 :]
        for index, child in enumerate(value):
            for smaller in _smaller(child):
                yield [*value[:index], smaller, *value[index + 1 :]]
    elif isinstance(value, str) and len(value) > 1:
        yield value[: len(value) // 2]
        yield value[1:]


async def shrink(payload: Any, still: Still) -> Any:
    """The smallest payload reachable by single cuts for which ``still`` holds."""
    current = payload
    attempts = 0
    progress = True
    while progress and attempts < MAX_ATTEMPTS:
        progress = False
        for candidate in _smaller(current):
            attempts += 1
            if attempts > MAX_ATTEMPTS:
                break
            if await still(candidate):
                current = candidate
                progress = True
                break
    return current

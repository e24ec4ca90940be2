from __future__ import annotations

from collections.abc import Iterator

import pytest

from .playground_process import start_playground, stop


@pytest.fixture(scope="module")
def playground_url() -> Iterator[str]:
    """One server for a module's tests: each test sends its own state, the server keeps none."""
    process, url = start_playground()
    try:
        yield url
    finally:
        stop(process)

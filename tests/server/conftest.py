from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from server_harness import HttpServer, http_server


@pytest.fixture(scope="session")
def shared_http() -> Iterator[HttpServer]:
    """One stateful HTTP server for the tests that only need a live endpoint."""
    with http_server() as server:
        yield server


@pytest.fixture(scope="session")
def shared_stateless_http() -> Iterator[HttpServer]:
    with http_server("--stateless") as server:
        yield server

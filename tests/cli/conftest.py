from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

REPO = Path(__file__).resolve().parents[2]
POLICIES = REPO / "policies"


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def policies() -> Path:
    return POLICIES

"""Fixtures: a fresh store on a real SQLite file per test."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from smith_tui.store import Store


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """Where the test's database file lives."""
    return tmp_path / "data" / "smith.db"


@pytest.fixture
def store(db_path: Path) -> Iterator[Store]:
    """An open store, closed after the test."""
    opened = Store.open(db_path)
    yield opened
    opened.close()

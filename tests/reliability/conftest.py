"""Fixtures of the reliability suite; writes the results file when asked (see support.py)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.reliability import support
from tests.support.runtime import make_git_repo


@pytest.fixture(scope="session", autouse=True)
def reliability_results() -> Iterator[None]:
    """Write every recorded row to ``$SMITH_RELIABILITY_REPORT`` once the session ends."""
    started = time.monotonic()
    yield
    if support.REPORT_PATH:
        support.write_report(support.REPORT_PATH, time.monotonic() - started)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository to run ``smith`` in."""
    return make_git_repo(tmp_path / "repo")

"""Fixtures of the tool tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.tools.test_web_fetch import LocalServer


@pytest.fixture
def server() -> Iterator[LocalServer]:
    """A started :class:`LocalServer` on the loopback, stopped after the test."""
    local = LocalServer().start()
    try:
        yield local
    finally:
        local.stop()

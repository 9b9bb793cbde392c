"""Fixtures of the app tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from smith_tui.engine.runtime import Runtime
from tests.app.app_harness import isolated_runtime
from tests.support.llm_server import ScriptedLLMServer


@pytest.fixture
def runtime(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_server: ScriptedLLMServer
) -> Iterator[Runtime]:
    """A runtime opened as ``smith`` opens one, against the scripted server, in isolated
    XDG dirs (a test module may define its own ``runtime`` instead)."""
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url) as opened:
        yield opened

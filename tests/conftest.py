"""Fixtures shared by the whole suite: the scripted LLM server and the recorded streams."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.llm_script import STREAMS_DIR
from tests.support.llm_server import ScriptedLLMServer
from tests.support.pilot import steady_snapshot


@pytest.fixture
def llm_server() -> Iterator[ScriptedLLMServer]:
    """A started :class:`ScriptedLLMServer` on 127.0.0.1, stopped after the test."""
    server = ScriptedLLMServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def streams_dir() -> Path:
    """The folder of recorded provider streams (env ``SMITH_STREAMS_DIR`` overrides it)."""
    if not STREAMS_DIR.is_dir():
        pytest.fail(
            f"recorded streams folder {STREAMS_DIR} is missing; "
            "set SMITH_STREAMS_DIR to the folder holding the .sse recordings"
        )
    return STREAMS_DIR


@pytest.fixture
def snap_compare(snap_compare: Callable[..., bool]) -> Callable[..., bool]:
    """pytest-textual-snapshot's ``snap_compare``, taking every snapshot of a steady screen:
    no blinking cursor, nothing still changing (see ``tests.support.pilot.steady_snapshot``)."""
    return steady_snapshot(snap_compare)


@pytest.fixture(autouse=True)
def _no_file_roles() -> Iterator[None]:
    """Sub-agents from agent files live in the process's role catalog: none leaks into the
    next test."""
    from smith_tui.engine.roles import set_file_roles

    yield
    set_file_roles(())

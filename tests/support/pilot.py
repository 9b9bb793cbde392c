"""Driving a Textual app under Pilot: the text on screen, and waiting for a condition."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable
from typing import Any

from rich.console import Console
from textual.app import App
from textual.pilot import Pilot


def screen_text(app: App[Any]) -> str:
    """The plain text of everything on screen (all layers composited)."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), record=True)
    console.print(
        app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    )
    return console.export_text()


async def wait_until(
    pilot: Pilot[Any], predicate: Callable[[], object], what: str = "", within: float = 10.0
) -> None:
    """Let the app run until ``predicate()`` holds; fail naming ``what`` after ``within`` s.

    Use it instead of a fixed pause whenever the test waits for something it can see.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        await pilot.pause(0.02)

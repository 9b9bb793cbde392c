"""Shared helpers for the transcript tests: a host app, screen text, sample Markdown.

(Named ``test_*`` to live beside the tests it serves; it defines no tests.)
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable
from importlib.resources import files
from typing import Any

from rich.console import Console
from textual.app import App, ComposeResult
from textual.pilot import Pilot

from smith_tui.widgets.transcript import Transcript

SIZE = (100, 30)


class TranscriptApp(App[None]):
    """Hosts one Transcript, styled by the shipped stylesheet."""

    CSS_PATH = str(files("smith_tui.styles") / "transcript.tcss")
    PAUSE_GC_ON_SCROLL = True

    def __init__(self, **options: Any) -> None:
        super().__init__()
        self.options = {"flush_interval": 0.01, **options}

    def compose(self) -> ComposeResult:
        yield Transcript(**self.options)

    @property
    def transcript(self) -> Transcript:
        return self.query_one(Transcript)


def screen_text(app: App[Any]) -> str:
    """The plain text on screen."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), record=True)
    console.print(app.screen._compositor.render_update(full=True))
    return console.export_text()


async def wait_until(
    pilot: Pilot[Any], predicate: Callable[[], object], what: str, within: float = 10.0
) -> None:
    """Let the app run until ``predicate()`` holds (fail naming ``what`` otherwise)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.02)


def sample_markdown(sections: int, marker: str = "LAST-LINE-MARKER") -> str:
    """An answer with headings, paragraphs, lists and code blocks (with blank lines inside)."""
    out = []
    for i in range(1, sections + 1):
        out.append(f"## Step {i}\n\n")
        out.append(
            f"Step {i} changes `module_{i}.py` so that **every** caller gets the same value; "
            "the line is long enough to wrap on a narrow terminal.\n\n"
        )
        out.append(f"- point {i}.a\n- point {i}.b\n\n1. first\n2. second\n\n")
        out.append(
            f"```python\ndef step_{i}(x: int) -> int:\n    y = x + {i}\n\n    return y * 2\n```\n\n"
        )
    out.append(f"The end: {marker}\n")
    return "".join(out)


def chunks(text: str, size: int) -> list[str]:
    """``text`` cut into pieces of ``size`` characters."""
    return [text[i : i + size] for i in range(0, len(text), size)]

"""Shared helpers for the transcript tests: a host app and sample Markdown."""

from __future__ import annotations

from importlib.resources import files
from typing import Any

from textual.app import App, ComposeResult

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


def sample_markdown(
    sections: int, marker: str = "LAST-LINE-MARKER", *, every_block: bool = False
) -> str:
    """An answer with headings, paragraphs, lists and code blocks (with blank lines inside),
    and with ``every_block`` a table (one cell long enough to wrap), a block quote, a
    rule and a nested list in every section too."""
    out = []
    for i in range(1, sections + 1):
        out.append(f"## Step {i}\n\n")
        out.append(
            f"Step {i} changes `module_{i}.py` so that **every** caller gets the same value; "
            "the line is long enough to wrap on a narrow terminal.\n\n"
        )
        out.append(f"- point {i}.a\n- point {i}.b\n\n1. first\n2. second\n\n")
        if every_block:
            out.append(
                f"| file | change | lines |\n|------|--------|------:|\n"
                f"| `module_{i}.py` | returns the **same** value to every caller, whichever "
                f"path it takes, so the cell wraps | {i * 7} |\n| `test_{i}.py` | a test | 3 |\n\n"
                f"> Step {i} keeps the **old** value for callers that ask for it.\n\n***\n\n"
                f"- callers of step {i}\n  - the loader\n  - the tests\n\n"
            )
        out.append(
            f"```python\ndef step_{i}(x: int) -> int:\n    y = x + {i}\n\n    return y * 2\n```\n\n"
        )
    out.append(f"The end: {marker}\n")
    return "".join(out)


def chunks(text: str, size: int) -> list[str]:
    """``text`` cut into pieces of ``size`` characters."""
    return [text[i : i + size] for i in range(0, len(text), size)]
